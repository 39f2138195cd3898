package cli

// mcpStops are the ways TestMCPServerStopEndsItsCalls stops the server
// process: its stdin closed. Windows has no SIGTERM to send to a process
// (os.Process.Signal supports only Kill); what a closed console sends is
// Go's syscall.SIGTERM inside the process, whose cause
// TestMCPServerStoppedBySignalCause gives the server's context; Wine
// cannot send console events at all (docs/windows.md).
var mcpStops = []string{"stdin closed"}
