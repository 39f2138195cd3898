package mcpserver_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
	"github.com/a2a-courier/a2a-courier/store"
)

func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// send and send_async take files (absolute paths of this machine) and data
// (JSON values) as --file and --data: a2a-js's parts agent (the real
// @a2a-js/sdk server) gets each file with its name, media type, size and
// hash, and each value; the record keeps the values as the client wrote
// them (a number past float64's precision too). A relative path is refused
// before anything runs; the command's own checks come back as tool errors
// with hints: a file that is not there, a Kibana agent (text only).
func TestFilesAndDataThroughTools(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	c := newCourier(t, startSim(t))
	dir := t.TempDir()
	o := c.options()
	o.FileDirs = []string{dir}
	s := connect(t, o)
	pngBytes, _ := base64.StdEncoding.DecodeString(interoptest.FilesPNG)
	csvBytes := []byte("name,n\nada,1\n")
	csv, png := filepath.Join(dir, "table.csv"), filepath.Join(dir, "dot.png")
	os.WriteFile(csv, csvBytes, 0o600)
	os.WriteFile(png, pngBytes, 0o600)
	url := js.URL(interoptest.MountV1, interoptest.AgentParts)
	want := strings.Join([]string{
		interoptest.PartLine(1, "text", "", "", `size=4 text="look"`),
		interoptest.PartLine(2, "raw", "table.csv", "text/csv", fmt.Sprintf("size=%d sha256=%s", len(csvBytes), hexSHA(csvBytes))),
		interoptest.PartLine(3, "raw", "dot.png", "image/png", fmt.Sprintf("size=%d sha256=%s", len(pngBytes), hexSHA(pngBytes))),
		interoptest.PartLine(4, "data", "", "application/json", `json={"k":[1,2],"s":"x"}`),
	}, "\n")
	res, doc, text := s.call("send", map[string]any{"url": url, "message": "look", "files": []string{csv, png},
		"data": []any{map[string]any{"k": []int{1, 2}, "s": "x"}}})
	if res.IsError || doc["state"] != "completed" || doc["reply"] != want || text != want {
		t.Fatalf("send: %v %v %q", res.IsError, doc, text)
	}

	// send_async, data alone (no message), a value kept digit for digit.
	big := json.RawMessage(`{"n": 12345678901234567890}`)
	res, doc, _ = s.call("send_async", map[string]any{"url": url, "message": "", "data": []any{big}})
	id, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "queued" || id == "" {
		t.Fatalf("send_async: %v %v", res.IsError, doc)
	}
	res, doc, _ = s.call("result", map[string]any{"context_id": id, "wait_seconds": 30})
	if r, _ := doc["reply"].(string); res.IsError || doc["state"] != "completed" || !strings.HasPrefix(r, "1 data ") {
		t.Errorf("its result: %v %v", res.IsError, doc)
	}
	rec, err := c.record(id)
	if compact := `{"n":12345678901234567890}`; err != nil || fmt.Sprint(rec.Parts) != fmt.Sprint([]store.Part{{Kind: "data", MediaType: "application/json", Size: int64(len(compact)), SHA256: hexSHA([]byte(compact))}}) {
		t.Errorf("the record's parts: %v %+v", err, rec)
	}

	ran := c.ranCount()
	res, _, text = s.call("send", map[string]any{"url": url, "message": "look", "files": []string{"table.csv"}})
	if !res.IsError || text != `files: "table.csv" is not an absolute path`+"\nhint: give each file's absolute path: the server's working directory is not the assistant's" || c.ranCount() != ran {
		t.Errorf("a relative path: %v %q", res.IsError, text)
	}
	for _, tc := range []struct {
		args      map[string]any
		code, say string
	}{
		{map[string]any{"url": url, "message": "look", "files": []string{filepath.Join(dir, "gone.csv")}}, "usage", "files " + filepath.Join(dir, "gone.csv") + ": no such file\nhint: check the path"},
		{map[string]any{"agent": "audit-agent", "message": "look", "files": []string{csv}}, "usage",
			"Agent Builder agents take text only: files and data cannot be sent to them; nothing was sent\nhint: put what the agent needs in the message text"},
		{map[string]any{"agent": "audit-agent", "message": "look", "data": []any{1}}, "usage", "Agent Builder agents take text only"},
	} {
		res, doc, text := s.call("send", tc.args)
		errDoc, _ := doc["error"].(map[string]any)
		if !res.IsError || errDoc["code"] != tc.code || !strings.HasPrefix(text, tc.say) {
			t.Errorf("%v: %v %v %q", tc.args, res.IsError, doc, text)
		}
	}
	if l := c.ledger(); len(l) != 2 {
		t.Errorf("tasks of the refused sends: %v", l)
	}
}

// The tools send files only from the directories FilesEnv names, and
// never a2a-courier's own (its config, keys, tokens, state), however the
// path reaches them: a symbolic link or a hard link inside an allowed
// directory, a file of the state directory when "/" is allowed. Without
// FilesEnv no file is sent. What is refused never runs; what is allowed
// reaches the agent (a2a-js's parts agent names it).
func TestFilesOnlyFromAllowedDirectories(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	c := newCourier(t, startSim(t))
	url := js.URL(interoptest.MountV1, interoptest.AgentParts)
	allowed, outside := t.TempDir(), t.TempDir()
	write := func(path, content string) string {
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ok := write(filepath.Join(allowed, "ok.csv"), "a,b\n")
	out := write(filepath.Join(outside, "secret.txt"), "not for agents")
	confDir := filepath.Join(allowed, "conf")
	write(filepath.Join(confDir, "config.yaml"), "profiles: {}\n")
	key := write(filepath.Join(allowed, "keys", "kibana.key"), "a key")
	state := write(filepath.Join(c.env["A2A_COURIER_STATE_DIR"], "tasks", "x.json"), "{}")
	links := map[string]string{"to-outside": out, "to-key": key}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(allowed, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(key, filepath.Join(allowed, "key-again")); err != nil {
		t.Fatal(err)
	}
	protected := func() []string {
		return []string{confDir, filepath.Join(confDir, "config.yaml"), key, c.env["A2A_COURIER_STATE_DIR"]}
	}
	session := func(dirs ...string) *session {
		o := c.options()
		o.FileDirs, o.Protected = dirs, protected
		return connect(t, o)
	}
	const own = "is a2a-courier's own"
	const elsewhere = "is not in a directory the tools may send files from"
	for _, tc := range []struct {
		dirs       []string
		file, want string
	}{
		{nil, ok, "files: the MCP server sends no file: A2A_COURIER_MCP_FILES names no directory files may be sent from\nhint: to let the tools send files, list the directories"},
		{[]string{allowed}, out, `files: "` + out + `" ` + elsewhere},
		{[]string{allowed}, filepath.Join(allowed, "to-outside"), elsewhere},
		{[]string{allowed}, filepath.Join(allowed, "..", filepath.Base(outside), "secret.txt"), elsewhere},
		{[]string{allowed}, key, `files: "` + key + `" ` + own + ` (` + key + `): no tool sends it` + "\nhint: a tool never sends a2a-courier's configuration, keys, tokens or state: nothing was sent"},
		{[]string{allowed}, filepath.Join(allowed, "to-key"), own},
		{[]string{allowed}, filepath.Join(allowed, "key-again"), own + " (" + key + ")"},
		{[]string{allowed}, filepath.Join(confDir, "config.yaml"), own + " (" + confDir + ")"},
		{[]string{allowed}, filepath.Join(allowed, "conf", ".", "config.yaml"), own},
		{[]string{"/"}, state, own + " (" + c.env["A2A_COURIER_STATE_DIR"] + ")"},
		{[]string{"/"}, key, own},
	} {
		s := session(tc.dirs...)
		for _, tool := range []string{"send", "send_async"} {
			ran := c.ranCount()
			res, doc, text := s.call(tool, map[string]any{"url": url, "message": "look", "files": []string{tc.file}})
			errDoc, _ := doc["error"].(map[string]any)
			if !res.IsError || !strings.Contains(text, tc.want) || errDoc["code"] != "usage" || c.ranCount() != ran {
				t.Errorf("%s %s (allowed %v): %v %q; %d command lines ran", tool, tc.file, tc.dirs, res.IsError, text, c.ranCount()-ran)
			}
		}
	}
	if l := c.ledger(); len(l) != 0 {
		t.Errorf("tasks of refused sends: %v", l)
	}
	for _, dirs := range [][]string{{allowed}, {"/"}} {
		res, doc, text := session(dirs...).call("send", map[string]any{"url": url, "message": "look", "files": []string{ok}})
		if r, _ := doc["reply"].(string); res.IsError || doc["state"] != "completed" || !strings.Contains(r, "ok.csv") {
			t.Errorf("an allowed file (allowed %v): %v %v %q", dirs, res.IsError, doc, text)
		}
	}
}

// FileDirs reads A2A_COURIER_MCP_FILES as PATH is read: absolute
// directories kept (~/ the home directory), the others ignored and named.
func TestFileDirsOfTheEnvironment(t *testing.T) {
	value, home, want, wantIgnored := " /srv/for-agents/ :~/out::relative/dir:~", "/home/ada", "[/srv/for-agents /home/ada/out /home/ada]", "[relative/dir]"
	if runtime.GOOS == "windows" {
		// Windows' list separator is ';' (a path has a drive's colon), and
		// ~\ is the home folder as ~/ is.
		value, home = ` C:\srv\for-agents\ ;~\out;;relative\dir;~/docs;~`, `C:\Users\ada`
		want, wantIgnored = `[C:\srv\for-agents C:\Users\ada\out C:\Users\ada\docs C:\Users\ada]`, `[relative\dir]`
	}
	dirs, ignored := mcpserver.FileDirs(value, home)
	if fmt.Sprint(dirs) != want || fmt.Sprint(ignored) != wantIgnored {
		t.Errorf("%q %q", dirs, ignored)
	}
}
