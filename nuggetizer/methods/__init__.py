"""The answer-key methods: one package per method with several modules (nuggets, battles,
support, rubrics), one module for a method that needs one (crux, kpr, udcg). The interface
they implement is in nuggetizer/interface/."""
