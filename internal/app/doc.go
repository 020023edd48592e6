// Package app wires VirtFlow's processes from their configuration: it opens the backing
// services, loads the demo when asked, serves HTTP and runs the embedded worker, and shuts
// everything down gracefully when its context ends. The mains in cmd/ only parse flags and
// call into it.
package app
