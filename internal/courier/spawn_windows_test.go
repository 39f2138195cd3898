package courier

import "testing"

// On Windows the worker keeps what a Windows program needs and the
// profile's folders (an assistant's process has them, and no HOME), whatever
// the case of their names (Windows' are case-insensitive: "Path"), and
// still none of the caller's secrets.
func TestWorkerEnvKeepsWindowsVariables(t *testing.T) {
	in := []string{
		`Path=C:\Windows\system32;C:\bin`, `SystemRoot=C:\Windows`, `SystemDrive=C:`, `windir=C:\Windows`,
		`TEMP=C:\Users\u\AppData\Local\Temp`, `TMP=C:\Users\u\AppData\Local\Temp`, `USERPROFILE=C:\Users\u`,
		`APPDATA=C:\Users\u\AppData\Roaming`, `LOCALAPPDATA=C:\Users\u\AppData\Local`, `USERNAME=u`,
		`PATHEXT=.COM;.EXE`, `ComSpec=C:\Windows\system32\cmd.exe`, `a2a_courier_state_dir=C:\s`,
		`A2A_Courier_Token=t-1`, `Kibana_Api_Key=k-2`, `OneDrive=C:\Users\u\OneDrive`,
	}
	got := map[string]bool{}
	for _, kv := range workerEnv(in) {
		got[kv] = true
	}
	for _, keep := range in[:13] {
		if !got[keep] {
			t.Errorf("worker environment lacks %q", keep)
		}
	}
	for _, drop := range in[13:] {
		if got[drop] {
			t.Errorf("worker environment keeps %q", drop)
		}
	}
}
