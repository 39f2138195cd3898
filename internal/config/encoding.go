package config

import (
	"bytes"
)

// SecretText is the text of a secret read from a file or stdin, without a
// UTF-8 byte-order mark (Notepad and PowerShell's `Out-File -Encoding
// utf8` write one, and it is no part of the key: sent, the key would be
// refused). A secret in UTF-16 (PowerShell 5.1's `>` and `Out-File`
// write it) is not the key's bytes either: for it, SecretText returns the
// encoding's name in enc, which EncodingError reports.
func SecretText(b []byte) (text, enc string) {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return "", "UTF-16 LE"
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return "", "UTF-16 BE"
	case bytes.IndexByte(b, 0) >= 0:
		return "", "UTF-16 (NUL bytes)"
	}
	return string(bytes.TrimPrefix(b, []byte{0xEF, 0xBB, 0xBF})), ""
}

// EncodingError is the error of a secret (what, e.g. "API key file x" or
// "the API key on stdin") in the encoding enc, with how to save it as
// ASCII or UTF-8.
func EncodingError(what, enc string) *Error {
	return configErr("save it as ASCII or UTF-8: in PowerShell, <command> | Set-Content -Encoding ascii key-file (or Out-File -Encoding utf8); "+
		"PowerShell 5.1's > writes UTF-16",
		"%s is %s text, not the key's characters", what, enc)
}
