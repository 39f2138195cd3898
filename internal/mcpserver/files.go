package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Which files the send and send_async tools may send. On the command line
// the user names the file; through MCP the assistant does, and an
// assistant reads what remote agents reply: a reply may tell it to send
// ~/.ssh/id_ed25519 to an agent the reply names. So the tools send no
// file unless the user named, in the server's environment, the
// directories files may come from (FilesEnv: the env of the assistant's
// entry for a2a-courier), and never one of a2a-courier's own: its config
// file and config directory, its state directory (records, replies,
// logs), the key and token files its config file and flags name, nor a
// file under those directories, whatever the path says (a symbolic link
// is followed, a hard link or another spelling of the same directory is
// caught by comparing files, not names). The check is made when the call
// is; the command reads the file after it.

// FilesEnv names the variable that lists the directories the tools may
// send files from, separated as PATH is (":" on Unix, ";" on Windows).
const FilesEnv = "A2A_COURIER_MCP_FILES"

// FileDirs reads FilesEnv's value: the directories (a leading ~/ is the
// home directory), and the entries it ignores (not absolute: the server's
// working directory is not the assistant's).
func FileDirs(value, home string) (dirs, ignored []string) {
	for _, d := range filepath.SplitList(value) {
		d = strings.TrimSpace(d)
		if home != "" && (d == "~" || strings.HasPrefix(d, "~/") || strings.HasPrefix(d, "~"+string(filepath.Separator))) {
			d = filepath.Join(home, strings.TrimPrefix(d, "~"))
		}
		switch {
		case d == "":
		case !filepath.IsAbs(d):
			ignored = append(ignored, d)
		default:
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	return dirs, ignored
}

// checkFiles refuses the files a call may not send (see above); the
// command checks the rest (a file not there, too large, an agent that
// takes none).
func (t *tools) checkFiles(files []string) *argError {
	if len(files) == 0 {
		return nil
	}
	if len(t.o.FileDirs) == 0 {
		return refuse(fmt.Sprintf("to let the tools send files, list the directories they may come from in %s in the env of the assistant's entry for a2a-courier "+
			"(e.g. \"%s\": \"/home/me/for-agents\"), then restart the assistant; or send the file from a terminal (a2a-courier send --file)", FilesEnv, FilesEnv),
			"files: the MCP server sends no file: %s names no directory files may be sent from", FilesEnv)
	}
	var own []string
	if t.o.Protected != nil {
		own = t.o.Protected()
	}
	for _, f := range files {
		real := resolved(f)
		if p := within(real, own); p != "" {
			return refuse("a tool never sends a2a-courier's configuration, keys, tokens or state: nothing was sent",
				"files: %q is a2a-courier's own (%s): no tool sends it", f, p)
		}
		if within(real, t.o.FileDirs) == "" {
			return refuse(fmt.Sprintf("the tools send files only from %s (%s): copy the file into one of them, or add its directory to %s in the assistant's entry",
				strings.Join(t.o.FileDirs, ", "), FilesEnv, FilesEnv), "files: %q is not in a directory the tools may send files from", f)
		}
	}
	return nil
}

// resolved is a path with its symbolic links followed, or as it is when
// they cannot be (what is not there: the command says so).
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within returns the first of roots (files or directories) that path is,
// or is under, "" when none: by name (both resolved), or by file (path or
// one of its parent directories is the same file as the root: a hard
// link, another spelling of a directory on a file system that ignores
// case).
func within(path string, roots []string) string {
	var chain []os.FileInfo
	for d := path; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			chain = append(chain, fi)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, root := range roots {
		if root == "" {
			continue
		}
		r := resolved(root)
		if rel, err := filepath.Rel(r, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return root
		}
		rfi, err := os.Stat(r)
		if err != nil {
			continue
		}
		for _, fi := range chain {
			if os.SameFile(fi, rfi) {
				return root
			}
		}
	}
	return ""
}
