package config

import (
	"errors"
	"net/url"
	"strings"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/internal/userdirs"
)

// readKeyFile reads an API key from a file that only its owner can read.
func readKeyFile(path string) (client.Secret, error) {
	return readSecretFile("API key file", "the API key's encoded value", path)
}

// ReadTokenFile reads an A2A agent's token from a file that only its
// owner can read.
func ReadTokenFile(path string) (client.Secret, error) {
	return readSecretFile("token file", "the token", path)
}

func readSecretFile(what, holds, path string) (client.Secret, error) {
	oneLine := "the " + what + " holds " + holds + " on one line"
	b, fi, err := boundedfile.Read(path, MaxSecretFileBytes)
	if err != nil {
		if ce := UnreadableFileError(what, err, "keep it in a regular file, "+ownfile.PrivateWords+": "+oneLine); ce != nil {
			return "", ce
		}
		return "", configErr(oneLine, "%s: %v", what, err)
	}
	// Others may not read it: its mode on Unix, its ACL on Windows.
	if a := ownfile.File(path, fi); a.Open {
		return "", configErr("run: "+a.Hint, "%s %s can be read by other users (%s)", what, path, a.Detail)
	}
	text, enc := SecretText(b)
	if enc != "" {
		return "", EncodingError(what+" "+path, enc)
	}
	key := strings.TrimSpace(text)
	if key == "" || strings.ContainsAny(key, "\n\r") {
		return "", configErr(oneLine, "%s %s is empty or has several lines", what, path)
	}
	return client.Secret(key), nil
}

// FileError reports a config file that cannot be read.
func FileError(path string, err error) *Error {
	if ce := UnreadableFileError("config file", err, "the config file is a regular file of a few KB (a symlink to one is fine): "+
		"move this one away, or point A2A_COURIER_CONFIG_DIR at another directory"); ce != nil {
		return ce
	}
	return configErr("check the file's permissions", "config file %s: %v", path, err)
}

// UnreadableFileError is the configuration error (exit 2) for a file named by the
// user or the config file that is not a regular file or is over its cap;
// nil for any other error.
func UnreadableFileError(what string, err error, hint string) *Error {
	var nr *boundedfile.NotRegularError
	var tl *boundedfile.TooLargeError
	switch {
	case errors.As(err, &nr):
		return configErr(hint, "%s %s is %s, not a regular file", what, nr.Path, boundedfile.Kind(nr.Mode))
	case errors.As(err, &tl) && tl.Size > tl.Max:
		return configErr(hint, "%s %s is %s, over the %s limit", what, tl.Path, boundedfile.SizeText(tl.Size), boundedfile.SizeText(tl.Max))
	case errors.As(err, &tl):
		return configErr(hint, "%s %s grew over the %s limit while it was read", what, tl.Path, boundedfile.SizeText(tl.Max))
	}
	return nil
}

// ExpandHome expands a leading ~ of a configured path to the home folder
// (HOME; on Windows USERPROFILE, and ~\ too).
func ExpandHome(p string, getenv func(string) string) string {
	return userdirs.Host(getenv).ExpandHome(p)
}

// PeerToken is the token of a peer of the config file: from its
// token_file, its token_env variable, or its token.
func PeerToken(name string, p Peer, getenv func(string) string) (client.Secret, error) {
	switch {
	case p.TokenFile != "":
		return ReadTokenFile(ExpandHome(p.TokenFile, getenv))
	case p.TokenEnv != "":
		v := strings.TrimSpace(getenv(p.TokenEnv))
		if v == "" {
			return "", configErr(shellcmd.EnvSet(p.TokenEnv, "<token>"), "peer %s takes its token from %s, which is not set", name, p.TokenEnv)
		}
		return client.Secret(v), nil
	}
	return client.Secret(strings.TrimSpace(p.Token)), nil
}

// AmbientToken is the token A2A_COURIER_TOKEN holds for an agent at
// origin (scheme://host, lower case), or "" when it is meant for another.
// An ambient token is bound to one origin by A2A_COURIER_TOKEN_ORIGIN, so
// that it never reaches an agent it was not meant for: a token with no
// origin is a configuration error.
func AmbientToken(origin string, getenv func(string) string) (client.Secret, error) {
	tok := strings.TrimSpace(getenv("A2A_COURIER_TOKEN"))
	if tok == "" {
		return "", nil
	}
	bound := strings.TrimRight(strings.TrimSpace(getenv("A2A_COURIER_TOKEN_ORIGIN")), "/")
	switch {
	case bound == "":
		return "", configErr("set A2A_COURIER_TOKEN_ORIGIN="+origin+" if the token is for this agent; or name the agent as a peer of the config file; or pass --token-file",
			"A2A_COURIER_TOKEN is set but not bound to an origin (A2A_COURIER_TOKEN_ORIGIN)")
	case !strings.EqualFold(originOf(bound), origin):
		return "", nil // meant for another agent
	}
	return client.Secret(tok), nil
}

// originOf is the scheme and host of a URL, in lower case.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
