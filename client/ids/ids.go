// Package ids holds the one rule for ids that reach a URL path or a file
// name (agent, conversation, context and task ids), shared by the client
// and the store. It imports nothing, so the store depends on no more than
// this rule.
package ids

// Valid reports whether id is 1 to max of letters, digits and
// . _ ~ : @ + -, not starting with '.' or ':': no slashes, no dot
// segments, no whitespace or control characters. It is the regular
// expression ^[A-Za-z0-9_~@+-][A-Za-z0-9._~:@+-]{0,max-1}$ written out:
// compiling that expression cost every command 1.5 ms at start-up.
func Valid(id string, max int) bool {
	if len(id) == 0 || len(id) > max || id[0] == '.' || id[0] == ':' {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == '~', c == ':', c == '@', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}
