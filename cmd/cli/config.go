package cli

import (
	"fmt"
	"net/http"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/oshint"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/store"
)

// defaultReadTimeout bounds a command's reads of a server (--timeout).
const defaultReadTimeout = 60 * time.Second

// loadSettings resolves every setting (config.Load), once per command. It
// does not require the connection to be configured.
func (a *App) loadSettings() (*config.Settings, error) {
	if a.cached != nil {
		return a.cached, nil
	}
	s, err := config.Load(a.p.getenv, a.flags)
	if err != nil {
		return nil, err
	}
	a.cached = s
	return s, nil
}

// kibanaSettings returns the settings, requiring a Kibana URL and an API
// key. Missing ones give the step-by-step set-up, not a bare error.
func (a *App) kibanaSettings() (*config.Settings, error) {
	s, err := a.loadSettings()
	if err != nil {
		return nil, err
	}
	if err := config.RequireKibana(s); err != nil {
		return nil, err
	}
	return s, nil
}

func (a *App) configPath() string { return config.Path(a.p.getenv) }

// noConfigDir is the error of a command that needs the config directory
// when there is none: it names the variable to set (HOME, or on Windows
// %APPDATA%).
func noConfigDir(p *Process) error {
	return configErr("set A2A_COURIER_CONFIG_DIR", "no config directory: %v", config.NoConfigDir(p.getenv))
}

func (a *App) openStore() (*store.Store, error) {
	dir, _ := config.StateDir(a.p.getenv)
	if dir == "" {
		return nil, configErr("set A2A_COURIER_STATE_DIR to a private directory", "cannot find a state directory: %v", config.NoStateDir(a.p.getenv))
	}
	st, err := store.Open(dir)
	if err != nil {
		return nil, configErr("set A2A_COURIER_STATE_DIR to a directory you can write", "%s", err.Error())
	}
	return st, nil
}

// stateDirErr reports a state directory the system will not let this
// process write (a full disk, a read-only file system, someone else's
// directory): a problem of the set-up, exit 2, with what to do about it.
// Nothing is retried: the next write would be refused the same way.
func stateDirErr(err error, ue *store.UnwritableError) *cliError {
	return &cliError{exit: ExitUsage, code: "state_dir", message: courier.OneLine(err), hint: plain(oshint.Unwritable(ue)), err: err}
}

// durationFlag returns the flag's value when it was given, else the setting.
func durationFlag(flagVal time.Duration, flagSet bool, setting time.Duration) time.Duration {
	if flagSet {
		return flagVal
	}
	return setting
}

func (a *App) httpClient(s *config.Settings) (*http.Client, error) {
	hc, err := a.httpClients()(store.Target{CAFile: s.CAFile, Insecure: s.Insecure})
	if err != nil {
		return nil, configErr("A2A_COURIER_CA_CERT must name a PEM file of CA certificates", "%s", err.Error())
	}
	return hc, nil
}

func userAgent() string { return "a2a-courier/" + versionString() }

// kibanaForRecord is the Agent Builder client that reads a task's
// conversation: the record's Kibana (recordSettings: the configured one,
// or the profile the task was sent with), in the space the local record
// says it was sent in. space names the space read, for messages
// ("default" for the default one). sameKibana is true when the client is
// the record's Kibana, in its space (false without a record). A task of
// another Kibana that no profile reaches is refused (exit 2): reading
// another Kibana would say "no reply yet" of a reply that is elsewhere.
func (a *App) kibanaForRecord(local *store.Record) (k *client.Kibana, space string, sameKibana bool, err error) {
	s, err := a.recordSettings(local)
	if err != nil {
		return nil, "", false, err
	}
	if local != nil && local.Target.Kind == store.TargetKibana {
		switch {
		case local.Target.Space != s.Space:
			cp := *s
			cp.Space = local.Target.Space
			a.printer().info("reading space %s, where task %s was sent (the configured space is %s)", spaceName(cp.Space), local.ContextID, spaceName(s.Space))
			s, sameKibana, a.readsTask = &cp, true, local
		default:
			sameKibana, a.readsTask = true, local
		}
	}
	k, err = a.kibana(s)
	return k, spaceName(s.Space), sameKibana, err
}

// recordSettings are the settings that reach recorded task rec's Kibana,
// its URL and key required (kibanaSettings): the configured ones when they
// name the record's Kibana (or rec is none, or no Kibana task); else those
// of the profile the task was sent with (its record names it), when the
// caller named no profile or Kibana of their own and that profile still
// names the record's Kibana: the command then runs as with --profile
// (the commands it prints carry it), and says so on stderr and in --json's
// note. Otherwise it is an error (exit 2) whose hint names how to reach
// that Kibana: a profile of the config file that names it, or
// --kibana-url and --space.
func (a *App) recordSettings(rec *store.Record) (*config.Settings, error) {
	s, err := a.loadSettings()
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Target.Kind != store.TargetKibana || sameKibana(s, rec) {
		return a.kibanaSettings()
	}
	given, flags := s, a.flags
	if a.given != nil {
		// Switched to another task's profile already: this one is compared
		// with what the caller configured.
		given, flags = a.given, a.givenFlags
		if sameKibana(given, rec) {
			return given, config.RequireKibana(given)
		}
	}
	if p := rec.Target.Profile; p != "" && flags.Profile == "" && flags.KibanaURL == "" {
		if ps, ok := a.profileReaching(p, rec.Target.URL); ok {
			note := fmt.Sprintf("task %s was sent with profile %s, which names its Kibana (%s): using that profile, not the configured Kibana (%s)",
				rec.ContextID, p, client.RedactURL(rec.Target.URL), configuredKibana(given))
			a.printer().info("%s", note)
			if a.recordNotes == nil {
				a.recordNotes = map[string]string{}
			}
			a.recordNotes[rec.ContextID] = note
			if a.given == nil {
				a.given, a.givenFlags = given, flags
			}
			a.flags.Profile, a.cached = p, ps
			return ps, nil
		}
	}
	return nil, a.otherKibanaErr(rec, given)
}

// sameKibana reports whether s names the Kibana of recorded task rec.
func sameKibana(s *config.Settings, rec *store.Record) bool {
	return s.URL != "" && client.KibanaOrigin(s.URL) == client.KibanaOrigin(rec.Target.URL)
}

// recordCredential is the credential that reaches recorded task rec's
// server: for a Kibana task, recordSettings' key.
func (a *App) recordCredential(rec *store.Record) (client.Secret, error) {
	if rec.Target.Kind != store.TargetKibana {
		return a.credentialFor(rec.Target)
	}
	s, err := a.recordSettings(rec)
	if err != nil {
		return "", err
	}
	return s.APIKey, nil
}

// profileReaching is the settings of profile p of the config file, with
// the caller's other flags, when they name url's Kibana and its key.
func (a *App) profileReaching(p, url string) (*config.Settings, bool) {
	flags := a.flags
	if a.given != nil {
		flags = a.givenFlags
	}
	flags.Profile = p
	ps, err := config.Load(a.p.getenv, flags)
	if err != nil || ps.URL == "" || client.KibanaOrigin(ps.URL) != client.KibanaOrigin(url) || config.RequireKibana(ps) != nil {
		return nil, false
	}
	return ps, true
}

// otherKibanaErr refuses to read recorded task rec at the configured
// Kibana, which is not its own: the hint names a profile that reaches the
// record's Kibana (the one it was sent with first), else its URL and
// space.
func (a *App) otherKibanaErr(rec *store.Record, s *config.Settings) *cliError {
	t := rec.Target
	hint := "run the command again with --kibana-url " + shellcmd.Quote(t.URL) + " --space " + shellcmd.Quote(spaceName(t.Space)) +
		" and that Kibana's API key (KIBANA_API_KEY, --api-key-file, or a profile with its own kibana-url and api-key)"
	names := []string{t.Profile}
	for _, p := range s.Profiles {
		names = append(names, p.Name)
	}
	for _, p := range names {
		if _, ok := a.profileReaching(p, t.URL); p != "" && ok {
			hint = "run the command again with --profile " + shellcmd.Quote(p) + ", which names that Kibana"
			break
		}
	}
	sent := ""
	if t.Profile != "" {
		sent = ", with profile " + t.Profile
	}
	return &cliError{exit: ExitUsage, code: "config", hint: plain(hint),
		message: fmt.Sprintf("task %s was sent to another Kibana (%s, space %s%s) than the configured one (%s); it is not read there",
			rec.ContextID, client.RedactURL(t.URL), spaceName(t.Space), sent, configuredKibana(s))}
}

// configuredKibana names the configured Kibana and where it came from.
func configuredKibana(s *config.Settings) string {
	if s.URL == "" {
		return "none"
	}
	return client.RedactURL(s.URL) + ", " + s.Sources["kibana_url"]
}

// inTaskSpace names, in a hint about recorded task rec (config.Settings.Where's
// "check KIBANA_SPACE_ID"), the space it was sent to: it is read there,
// whatever space is configured now.
func inTaskSpace(rec *store.Record, hint nextstep.Text) nextstep.Text {
	if rec.Target.Kind != store.TargetKibana {
		return hint
	}
	return hint.Fix(nextstep.KibanaSpace, config.SpaceWhere(rec.Target.Space, "task "+rec.ContextID, ""))
}

// refusedTaskSpace is inTaskSpace for the error of a task that ended
// (refused, say): when the task went to the configured space, the hint
// names that one by its source instead (App.hint), which is what to
// change before sending again.
func (a *App) refusedTaskSpace(rec *store.Record, hint nextstep.Text) nextstep.Text {
	if s := a.cached; s != nil && client.KibanaOrigin(rec.Target.URL) == client.KibanaOrigin(s.URL) && rec.Target.Space == s.Space {
		return hint
	}
	return inTaskSpace(rec, hint)
}

func spaceName(space string) string {
	if space == "" {
		return "default"
	}
	return space
}

// kibana builds the Agent Builder client for settings.
func (a *App) kibana(s *config.Settings) (*client.Kibana, error) {
	hc, err := a.httpClient(s)
	if err != nil {
		return nil, err
	}
	k, err := client.NewKibana(client.KibanaConfig{
		URL: s.URL, Space: s.Space, APIKey: s.APIKey, HTTPClient: hc, UserAgent: userAgent(),
	})
	if err != nil {
		return nil, configErr("check the Kibana URL and space ("+s.Sources["kibana_url"]+", "+s.Sources["space"]+")", "%s", err.Error())
	}
	return k, nil
}

func describeTarget(s *config.Settings) string {
	sp := s.Space
	if sp == "" {
		sp = "default"
	}
	return fmt.Sprintf("%s (space %s)", s.URL, sp)
}
