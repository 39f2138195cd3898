package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// Defaults for the timing settings.
const (
	defaultPollInterval = 20 * time.Second
	defaultMaxWait      = 2 * time.Hour
	defaultReadTimeout  = 60 * time.Second
	defaultSendTimeout  = 5 * time.Minute
	defaultResultWait   = 5 * time.Minute
)

// settings are the resolved configuration of one command.
type settings struct {
	URL      string
	Space    string
	APIKey   client.Secret
	CAFile   string
	Insecure bool
	StateDir string
	// PollInterval and MaxWait come from flags or A2A_COURIER_* variables.
	PollInterval time.Duration
	MaxWait      time.Duration
}

// kibanaSettings reads the Kibana connection: flag > environment > default.
// A missing URL or key gives the step-by-step set-up, not a bare error.
func (a *App) kibanaSettings() (*settings, error) {
	s := &settings{
		URL:    strings.TrimSpace(a.p.getenv("KIBANA_URL")),
		Space:  strings.TrimSpace(a.p.getenv("KIBANA_SPACE_ID")),
		APIKey: client.Secret(strings.TrimSpace(a.p.getenv("KIBANA_API_KEY"))),
		CAFile: strings.TrimSpace(a.p.getenv("A2A_COURIER_CA_CERT")),
	}
	if v := a.p.getenv("A2A_COURIER_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, configErr("use true or false", "A2A_COURIER_INSECURE=%q is not a boolean", v)
		}
		s.Insecure = b
	}
	var missing []string
	if s.URL == "" {
		missing = append(missing, "KIBANA_URL")
	}
	if s.APIKey == "" {
		missing = append(missing, "KIBANA_API_KEY")
	}
	if len(missing) > 0 {
		return nil, &cliError{exit: ExitUsage, code: "not_configured",
			message: "not configured: " + strings.Join(missing, " and ") + " not set",
			hint:    setupSteps()}
	}
	if _, err := client.ParseKibanaURL(s.URL); err != nil {
		return nil, configErr("KIBANA_URL is Kibana's address, e.g. https://my-deployment.kb.europe-west1.gcp.cloud.es.io", "%s", err.Error())
	}
	if s.Space == "default" {
		s.Space = ""
	}
	return s, nil
}

// setupSteps is the guided set-up printed when nothing is configured.
func setupSteps() string {
	return `set up a2a-courier in three steps:
  1. In Kibana, open Stack Management > API keys > Create API key. Give it the
     Kibana privilege "Agent Builder: Read" (feature_agentBuilder.read) in the
     space your agents live in, and copy the "encoded" value.
  2. Set the variables (in your shell profile, or in the assistant's environment):
       export KIBANA_URL=https://<your-deployment>.kb.<region>.cloud.es.io
       export KIBANA_API_KEY=<the encoded value>
       export KIBANA_SPACE_ID=<space id>     # only for a space other than "default"
  3. Check it: a2a-courier discover
To try the tool without a Kibana: a2a-courier demo`
}

// stateDir resolves the state directory: A2A_COURIER_STATE_DIR, else
// $XDG_STATE_HOME/a2a-courier, else ~/.local/state/a2a-courier.
func (a *App) stateDir() (string, error) {
	if d := a.p.getenv("A2A_COURIER_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := a.p.getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "a2a-courier"), nil
	}
	home := a.p.getenv("HOME")
	if home == "" {
		return "", configErr("set A2A_COURIER_STATE_DIR to a private directory", "cannot find a state directory: HOME is not set")
	}
	return filepath.Join(home, ".local", "state", "a2a-courier"), nil
}

func (a *App) openStore() (*store.Store, error) {
	dir, err := a.stateDir()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(dir)
	if err != nil {
		return nil, configErr("set A2A_COURIER_STATE_DIR to a directory you can write", "%s", err.Error())
	}
	return st, nil
}

// durationSetting reads a duration flag, else an environment variable,
// else the default.
func (a *App) durationSetting(flagVal time.Duration, flagSet bool, env string, def time.Duration) (time.Duration, error) {
	if flagSet {
		return flagVal, nil
	}
	if v := a.p.getenv(env); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, configErr("use a Go duration such as 20s or 5m", "%s=%q is not a positive duration", env, v)
		}
		return d, nil
	}
	return def, nil
}

func (a *App) httpClient(s *settings) (*http.Client, error) {
	if a.p.HTTPClient != nil {
		return a.p.HTTPClient, nil
	}
	tlsCfg, err := client.TLSConfig(s.CAFile, s.Insecure)
	if err != nil {
		return nil, configErr("A2A_COURIER_CA_CERT must name a PEM file of CA certificates", "%s", err.Error())
	}
	return client.NewHTTPClient(tlsCfg), nil
}

func userAgent() string { return "a2a-courier/" + versionString() }

// kibana builds the Agent Builder client for settings.
func (a *App) kibana(s *settings) (*client.Kibana, error) {
	hc, err := a.httpClient(s)
	if err != nil {
		return nil, err
	}
	k, err := client.NewKibana(client.KibanaConfig{
		URL: s.URL, Space: s.Space, APIKey: s.APIKey, HTTPClient: hc, UserAgent: userAgent(),
	})
	if err != nil {
		return nil, configErr("check KIBANA_URL and KIBANA_SPACE_ID", "%s", err.Error())
	}
	return k, nil
}

// identity fingerprints a target origin and credential, so that a task is
// only ever worked on by a worker holding the credential it was sent with.
// It is a truncated hash: it names the credential without revealing it.
func identity(origin, key string) string {
	sum := sha256.Sum256([]byte("a2a-courier identity v1\x00" + origin + "\x00" + client.NormalizeAPIKey(key)))
	return hex.EncodeToString(sum[:8])
}

func targetOrigin(rawURL string) string {
	u, err := client.ParseKibanaURL(rawURL)
	if err != nil {
		return rawURL
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + u.Path
}

func describeTarget(s *settings) string {
	sp := s.Space
	if sp == "" {
		sp = "default"
	}
	return fmt.Sprintf("%s (space %s)", s.URL, sp)
}
