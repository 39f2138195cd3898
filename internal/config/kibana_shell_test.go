package config

import (
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
)

// The guided set-up speaks the system's shell: on Windows PowerShell's
// `$env:` and `Get-Content … |`, which has no `export` and no `<`.
func TestSetupStepsInEachShell(t *testing.T) {
	ps := setupSteps(shellcmd.PowerShell, asIs)
	for _, want := range []string{`$env:KIBANA_URL = "https://<your-deployment>.kb.<region>.cloud.es.io"`, `$env:KIBANA_API_KEY = "<the encoded value>"`, "Get-Content key-file | a2a-courier config set api-key"} {
		if !strings.Contains(ps, want) {
			t.Errorf("PowerShell steps lack %q:\n%s", want, ps)
		}
	}
	if strings.Contains(ps, "export ") || strings.Contains(ps, "< key-file") {
		t.Errorf("PowerShell steps in POSIX syntax:\n%s", ps)
	}
	sh := setupSteps(shellcmd.POSIX, asIs)
	for _, want := range []string{"export KIBANA_URL=https://<your-deployment>.kb.<region>.cloud.es.io", "a2a-courier config set api-key < key-file"} {
		if !strings.Contains(sh, want) {
			t.Errorf("POSIX steps lack %q:\n%s", want, sh)
		}
	}
	if SetupSteps() != setupSteps(shellcmd.Native, asIs) {
		t.Error("SetupSteps is not in this system's shell")
	}
}
