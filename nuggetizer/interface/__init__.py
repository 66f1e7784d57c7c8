"""The method interface: what every answer-key method implements (base), declares (declare),
adds to the report (report_part); the registry of methods and their descriptions."""
