// Package oshint writes the parts of hints that name a command of the
// system: `df -h` and `kill -CONT` on Unix, Explorer, `icacls` and
// `taskkill` on Windows. No hint tells a Windows user to run a Unix
// command; each system's texts are in its own file, with one set of names.
package oshint
