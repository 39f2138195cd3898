package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// caller is a token's owner; only the token's SHA-256 is kept.
type caller struct {
	name string
	hash [32]byte
}

// MinTokenLength is the shortest token a tokens file may hold.
const MinTokenLength = 16

// LoadTokens reads a tokens file: one caller a line, "name token", blank
// lines and # comments skipped. The file must be the owner's alone
// (ownfile.File: its mode on Unix, its ACL on Windows). Only the tokens'
// hashes are kept; an error never quotes a token.
func LoadTokens(path string) ([]caller, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the tokens file: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the tokens file %s is not a regular file", path)
	}
	if a := ownfile.File(path, fi); a.Open {
		return nil, &UsageError{Msg: fmt.Sprintf("the tokens file %s can be read by others (%s%s)", path, a.Detail, a.Who), Hint: a.Hint}
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("cannot read the tokens file: %v", err)
	}
	n := len(b)
	var out []caller
	names := map[string]bool{}
	for i, line := range strings.Split(string(b[:n]), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("the tokens file %s, line %d: want \"name token\"", path, i+1)
		}
		if len(fields[1]) < MinTokenLength {
			return nil, fmt.Errorf("the tokens file %s, line %d: the token of %s is shorter than %d characters", path, i+1, fields[0], MinTokenLength)
		}
		if names[fields[0]] {
			return nil, fmt.Errorf("the tokens file %s, line %d: %s is named twice", path, i+1, fields[0])
		}
		names[fields[0]] = true
		out = append(out, caller{name: fields[0], hash: sha256.Sum256([]byte(fields[1]))})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the tokens file %s names no caller", path)
	}
	return out, nil
}

// who finds the caller of a request by its bearer token: every known hash
// is compared, in constant time, whichever matches.
func who(callers []caller, r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(h, "bearer ")
	}
	if !ok || tok == "" {
		return "", false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	found := ""
	for _, c := range callers {
		if subtle.ConstantTimeCompare(sum[:], c.hash[:]) == 1 {
			found = c.name
		}
	}
	return found, found != ""
}

// limiter is a rate limit for each caller.
type limiter struct {
	mu    sync.Mutex
	per   rate.Limit
	burst int
	m     map[string]*rate.Limiter
}

func newLimiter(perMinute float64, burst int) *limiter {
	return &limiter{per: rate.Limit(perMinute / 60), burst: burst, m: map[string]*rate.Limiter{}}
}

// allow takes one request of the caller's allowance, or says how long to
// wait (whole seconds, at least 1).
func (l *limiter) allow(name string, now time.Time) (bool, int) {
	l.mu.Lock()
	lim := l.m[name]
	if lim == nil {
		lim = rate.NewLimiter(l.per, l.burst)
		l.m[name] = lim
	}
	l.mu.Unlock()
	r := lim.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d == 0 {
		return true, 0
	}
	r.CancelAt(now)
	return false, max(1, int(math.Ceil(d.Seconds())))
}

func retryAfter(w http.ResponseWriter, secs int) {
	w.Header().Set("Retry-After", strconv.Itoa(secs))
}

// privateFile refuses a secret's file that others can read.
func privateFile(what, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("cannot read %s: %v", what, err)
	}
	if a := ownfile.File(path, fi); a.Open {
		return &UsageError{Msg: fmt.Sprintf("%s %s can be read by others (%s%s)", what, path, a.Detail, a.Who), Hint: a.Hint}
	}
	return nil
}

// LocalTokensName is the token file serve makes in its state directory
// when it is given no --tokens-file: the token alone, of the caller
// "local", as a client's --token-file reads it.
const LocalTokensName = "local-token"

// localCallers reads the token file serve made before, or makes it: owner
// only (ownfile: its mode on Unix, its ACL on Windows), created
// exclusively, one random token. Only its hash is kept.
func localCallers(path string) ([]caller, error) {
	if _, err := os.Lstat(path); err != nil {
		if err := makeLocalToken(path); err != nil {
			return nil, err
		}
	}
	if err := privateFile("the token file", path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the token file: %v", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < MinTokenLength || strings.ContainsAny(tok, " \t\r\n") {
		return nil, &UsageError{Msg: fmt.Sprintf("the token file %s holds no token of %d characters or more", path, MinTokenLength),
			Hint: "remove it: serve makes a new one"}
	}
	return []caller{{name: "local", hash: sha256.Sum256([]byte(tok))}}, nil
}

func makeLocalToken(path string) error {
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return fmt.Errorf("cannot make a token: %v", err)
	}
	f, err := ownfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return fmt.Errorf("cannot make the token file: %v", err)
	}
	_, err = fmt.Fprintf(f, "%s\n", hex.EncodeToString(raw[:]))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("cannot write the token file: %v", err)
	}
	return nil
}
