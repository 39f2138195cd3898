package config

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
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
		if ce := UnreadableFileError(what, err, "keep it in a regular file, mode 0600: "+oneLine); ce != nil {
			return "", ce
		}
		return "", configErr(oneLine, "%s: %v", what, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", configErr("run: chmod 600 "+path, "%s %s can be read by other users (mode %04o)", what, path, fi.Mode().Perm())
	}
	key := strings.TrimSpace(string(b))
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

func ExpandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	return p
}
