package mcpserver_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
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
	s := connect(t, c.options())
	dir := t.TempDir()
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
