// Package oshint writes the hints about the state directory that name a
// command of the system: `df -h` and `ls -ld` on Unix, the drive's free
// space (Get-PSDrive, Explorer) and `icacls` on Windows. No hint tells a
// Windows user to run a Unix command; each system's texts are in its own
// file, with one set of names. (How to continue or end a stopped worker is
// internal/courier's: ContinueWorker, EndWorker.)
package oshint
