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
// conversation: in the space the local record says it was sent in, when
// the configured Kibana is the record's (the task was sent with this
// Kibana's key), else in the configured space. space names the space read,
// for messages ("default" for the default one).
// sameKibana is true when the client is the record's Kibana, in its space
// (false without a record, or for another Kibana).
func (a *App) kibanaForRecord(local *store.Record) (k *client.Kibana, space string, sameKibana bool, err error) {
	s, err := a.kibanaSettings()
	if err != nil {
		return nil, "", false, err
	}
	if local != nil && local.Target.Kind == store.TargetKibana {
		switch {
		case client.KibanaOrigin(local.Target.URL) != client.KibanaOrigin(s.URL):
			a.printer().warn("task %s was sent to another Kibana (%s); reading the configured one", local.ContextID, client.RedactURL(local.Target.URL))
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
