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

// settings are a command line's settings: those its flags, the
// environment and the config file give (config.Load, once), those that
// reach a recorded task's Kibana (recordSettings), and the Agent Builder
// client for them.
type settings struct {
	p *Process
	// flags are the root's flags as parsed (never written here).
	flags   *config.Flags
	printer func() *printer
	clients func() func(store.Target) (*http.Client, error)
	// credentialFor is a generic agent's credential (targets).
	credentialFor func(store.Target) (client.Secret, error)

	// configured are the settings of the command line (config.Load).
	configured *config.Settings
}

// taskView is how a command that reads recorded tasks speaks of them, its
// own (the command's run keeps it, and hands it to what reads a task):
// the profile of the config file a task was sent with, when the command
// reads it with that profile instead of the configured Kibana
// (recordSettings), and its settings; the commands it prints then carry
// --profile (App.callerWith), and its documents the notes that say so, by
// contextId. The zero view: the configured settings.
type taskView struct {
	profile  string
	settings *config.Settings
	notes    map[string]string
}

// inUse are the settings the view's texts speak of: the task's profile's,
// else the command line's (nil: none loaded).
func (v *taskView) inUse(configured *config.Settings) *config.Settings {
	if v != nil && v.settings != nil {
		return v.settings
	}
	return configured
}

// viewErr is the error of a command that read recorded tasks as view
// says: Run prints it for that view (App.callerWith).
type viewErr struct {
	err  error
	view *taskView
}

func (e *viewErr) Error() string { return e.err.Error() }
func (e *viewErr) Unwrap() error { return e.err }

// inView is err of a command that read recorded tasks as v says (nil
// stays nil; so does an error of the zero view).
func inView(v *taskView, err error) error {
	if err == nil || v.profile == "" {
		return err
	}
	return &viewErr{err, v}
}

// load resolves every setting (config.Load), once per command. It does
// not require the connection to be configured.
func (st *settings) load() (*config.Settings, error) {
	if st.configured != nil {
		return st.configured, nil
	}
	s, err := config.LoadEnv(st.p.LookupEnv, *st.flags)
	if err != nil {
		return nil, err
	}
	st.configured = s
	return s, nil
}

// kibanaSettings returns the settings, requiring a Kibana URL and an API
// key. Missing ones give the step-by-step set-up, not a bare error.
func (st *settings) kibanaSettings() (*config.Settings, error) {
	s, err := st.load()
	if err != nil {
		return nil, err
	}
	if err := config.RequireKibana(s); err != nil {
		return nil, err
	}
	return s, nil
}

func (st *settings) configPath() string { return config.Path(st.p.getenv) }

// noConfigDir is the error of a command that needs the config directory
// when there is none: it names the variable to set (HOME, or on Windows
// %APPDATA%).
func noConfigDir(p *Process) error {
	return configErr("set A2A_COURIER_CONFIG_DIR", "no config directory: %v", config.NoConfigDir(p.getenv))
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

func (st *settings) httpClient(s *config.Settings) (*http.Client, error) {
	hc, err := st.clients()(store.Target{CAFile: s.CAFile, Insecure: s.Insecure})
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
// the record's Kibana, in its space (false without a record): the hints
// of what it reads then name that space (inTaskSpace). A task of another
// Kibana that no profile reaches is refused (exit 2): reading another
// Kibana would say "no reply yet" of a reply that is elsewhere.
func (st *settings) kibanaForRecord(local *store.Record, v *taskView) (k *client.Kibana, space string, sameKibana bool, err error) {
	s, err := st.recordSettings(local, v)
	if err != nil {
		return nil, "", false, err
	}
	if local != nil && local.Target.Kind == store.TargetKibana {
		if local.Target.Space != s.Space {
			cp := *s
			cp.Space = local.Target.Space
			st.printer().info("reading space %s, where task %s was sent (the configured space is %s)", spaceName(cp.Space), local.ContextID, spaceName(s.Space))
			s = &cp
		}
		sameKibana = true
	}
	k, err = st.kibana(s)
	return k, spaceName(s.Space), sameKibana, err
}

// recordSettings are the settings that reach recorded task rec's Kibana,
// its URL and key required (kibanaSettings): the configured ones when they
// name the record's Kibana (or rec is none, or no Kibana task), or those
// of the profile v reads tasks with already when they do; else those of
// the profile the task was sent with (its record names it), when the
// caller named no profile or Kibana of their own and that profile still
// names the record's Kibana: v then reads with that profile (the commands
// the command prints carry it: App.callerWith), and the command says so on
// stderr and in --json's note (v.notes). Otherwise it is an error (exit 2)
// whose hint names how to reach that Kibana: a profile of the config file
// that names it, or --kibana-url and --space.
func (st *settings) recordSettings(rec *store.Record, v *taskView) (*config.Settings, error) {
	given, err := st.load()
	if err != nil {
		return nil, err
	}
	switch s := v.inUse(given); {
	case rec == nil || rec.Target.Kind != store.TargetKibana || sameKibana(s, rec):
		if err := config.RequireKibana(s); err != nil {
			return nil, err
		}
		return s, nil
	case s != given && sameKibana(given, rec):
		// Reading with another task's profile already: this one is
		// compared with what the caller configured.
		return given, config.RequireKibana(given)
	}
	if p := rec.Target.Profile; p != "" && st.flags.Profile == "" && st.flags.KibanaURL == "" {
		if ps, ok := st.profileReaching(p, rec.Target.URL); ok {
			note := fmt.Sprintf("task %s was sent with profile %s, which names its Kibana (%s): using that profile, not the configured Kibana (%s)",
				rec.ContextID, p, client.RedactURL(rec.Target.URL), configuredKibana(given))
			st.printer().info("%s", note)
			if v.notes == nil {
				v.notes = map[string]string{}
			}
			v.notes[rec.ContextID] = note
			v.profile, v.settings = p, ps
			return ps, nil
		}
	}
	return nil, st.otherKibanaErr(rec, given)
}

// sameKibana reports whether s names the Kibana of recorded task rec.
func sameKibana(s *config.Settings, rec *store.Record) bool {
	return s.URL != "" && client.KibanaOrigin(s.URL) == client.KibanaOrigin(rec.Target.URL)
}

// recordCredential is the credential that reaches recorded task rec's
// server: for a Kibana task, recordSettings' key.
func (st *settings) recordCredential(rec *store.Record, v *taskView) (client.Secret, error) {
	if rec.Target.Kind != store.TargetKibana {
		return st.credentialFor(rec.Target)
	}
	s, err := st.recordSettings(rec, v)
	if err != nil {
		return "", err
	}
	return s.APIKey, nil
}

// profileReaching is the settings of profile p of the config file, with
// the caller's other flags, when they name url's Kibana and its key.
func (st *settings) profileReaching(p, url string) (*config.Settings, bool) {
	flags := *st.flags
	flags.Profile = p
	ps, err := config.Load(st.p.getenv, flags)
	if err != nil || ps.URL == "" || client.KibanaOrigin(ps.URL) != client.KibanaOrigin(url) || config.RequireKibana(ps) != nil {
		return nil, false
	}
	return ps, true
}

// otherKibanaErr refuses to read recorded task rec at the configured
// Kibana, which is not its own: the hint names a profile that reaches the
// record's Kibana (the one it was sent with first), else its URL and
// space.
func (st *settings) otherKibanaErr(rec *store.Record, s *config.Settings) *cliError {
	t := rec.Target
	// No tool takes these flags: to the tools, the command is one to run
	// in a terminal.
	again := nextstep.New(commandOf(st.p.Args)).Pos(rec.ContextID)
	const key = " and that Kibana's API key (KIBANA_API_KEY, --api-key-file, or a profile with its own kibana-url and api-key)"
	hint := nextstep.Per(plain("run the command again with --kibana-url "+shellcmd.Quote(t.URL)+" --space "+shellcmd.Quote(spaceName(t.Space))+key),
		plain("run `"+nextstep.Caller{}.Line(again.Flag("--kibana-url", t.URL).Flag("--space", spaceName(t.Space)))+"` in a terminal"+key))
	names := []string{t.Profile}
	for _, p := range s.Profiles {
		names = append(names, p.Name)
	}
	for _, p := range names {
		if _, ok := st.profileReaching(p, t.URL); p != "" && ok {
			hint = nextstep.Per(plain("run the command again with --profile "+shellcmd.Quote(p)+", which names that Kibana"),
				plain("run `"+nextstep.Caller{}.Line(again.Flag("--profile", p))+"` in a terminal: profile "+p+" names that Kibana"))
			break
		}
	}
	sent := ""
	if t.Profile != "" {
		sent = ", with profile " + t.Profile
	}
	return &cliError{exit: ExitUsage, code: "config", hint: hint,
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
// names that one by its source instead (App.caller), which is what to
// change before sending again. s are the settings in use (nil: none).
func refusedTaskSpace(rec *store.Record, hint nextstep.Text, s *config.Settings) nextstep.Text {
	if s != nil && client.KibanaOrigin(rec.Target.URL) == client.KibanaOrigin(s.URL) && rec.Target.Space == s.Space {
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
func (st *settings) kibana(s *config.Settings) (*client.Kibana, error) {
	hc, err := st.httpClient(s)
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
