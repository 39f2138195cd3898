package userdirs

import "golang.org/x/sys/windows"

// knownFolder is where Windows says a known folder is, whatever the
// environment says (SHGetKnownFolderPath); "" if it cannot tell.
func knownFolder(f Folder) string {
	id := [...]*windows.KNOWNFOLDERID{windows.FOLDERID_Profile, windows.FOLDERID_RoamingAppData, windows.FOLDERID_LocalAppData}[f]
	p, err := windows.KnownFolderPath(id, windows.KF_FLAG_DEFAULT)
	if err != nil {
		return ""
	}
	return p
}
