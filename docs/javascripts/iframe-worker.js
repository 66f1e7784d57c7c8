// Search from a guide opened from disk (site/index.html, a file: URL).
//
// mkdocs-material runs its search in a Web Worker, and browsers refuse to start a worker from
// a file: page. Material's offline plugin inlines the search index (search/search_index.js)
// and loads a shim named iframe-worker from a CDN for the worker; the guide loads nothing
// from the network, so this file is that shim, written here: on a file: page, `Worker` runs
// its script in a hidden iframe, and messages go between the page and the frame with
// window.postMessage. Served over http(s), nothing changes. (Its name keeps the offline
// plugin from adding the CDN's copy.)
(function () {
  "use strict";
  if (window.location.protocol !== "file:") {
    return;
  }

  class FrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.onerror = null;
      this.pending = [];
      this.frame = document.createElement("iframe");
      this.frame.hidden = true;
      this.frame.setAttribute("aria-hidden", "true");
      window.addEventListener("message", (event) => {
        if (event.source !== this.frame.contentWindow) {
          return;
        }
        const message = new MessageEvent("message", { data: event.data });
        this.dispatchEvent(message);
        if (typeof this.onmessage === "function") {
          this.onmessage(message);
        }
      });
      this.frame.addEventListener("load", () => {
        const queued = this.pending;
        this.pending = null;
        queued.forEach((data) => this.postMessage(data));
      });
      // In the frame, the worker's postMessage(data) answers the page; the page's messages
      // are posted to the frame with its own postMessage, kept as fromPage (the frame is of
      // the page's origin), and arrive as the "message" events the worker listens to.
      const source = new URL(url, document.baseURI).href;
      this.frame.srcdoc = "<!doctype html><script>" +
        "self.fromPage = self.postMessage.bind(self);" +
        "self.postMessage = function (data) { parent.postMessage(data, '*'); };" +
        "</scr" + "ipt><script src=\"" + source.replace(/"/g, "&quot;") + "\"></scr" + "ipt>";
      document.documentElement.appendChild(this.frame);
    }

    postMessage(data) {
      if (this.pending !== null) {
        this.pending.push(data);
      } else {
        this.frame.contentWindow.fromPage(data, "*");
      }
    }

    terminate() {
      this.frame.remove();
    }
  }

  window.Worker = FrameWorker;
})();
