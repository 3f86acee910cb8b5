"""Readers and writers of gridsched's inputs: workloads, traces, scenarios."""

#: File name endings (lower case) of the traces ``gridsched run`` converts on the fly and
#: ``gridsched convert`` converts: SWF (Parallel Workloads Archive) and GWF (Grid Workloads Archive).
TRACE_SUFFIXES = (".swf", ".swf.gz", ".gwf", ".gwf.gz")
