//go:build !windows

package userdirs

// knownFolder: only Windows has known folders.
func knownFolder(Folder) string { return "" }
