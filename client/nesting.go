package client

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
)

// MaxNesting is how many arrays and objects a response may open inside one
// another. Kibana stores a conversation as one Elasticsearch document, and
// Elasticsearch's JSON parser (Jackson) refuses documents nesting deeper
// than 1000 by default; a conversation with tool results nests 20 to 30
// levels, an A2A answer fewer. A body nesting deeper is a bad response,
// never a real one.
//
// The bound exists for gjson.Valid, which recurses once per level: ten
// million nested arrays (20 MB, a 19 KB gzip body) overflowed the stack and
// ended the process. At 1000 levels it needs well under a megabyte of
// stack. The other readers of a body (gjson.Get and ForEach, this
// package's round scanner) walk nested values without recursion, and
// encoding/json stops at 10000 levels by itself.
const MaxNesting = 1000

// ErrNestedTooDeep is wrapped by the *Error (KindProtocol) of a response
// that nests deeper than MaxNesting levels.
var ErrNestedTooDeep = errors.New("the response nests too deep")

var nestingMessage = fmt.Sprintf("the response nests deeper than %d levels", MaxNesting)

// nestsTooDeep reports whether the JSON text s opens more than MaxNesting
// arrays or objects inside one another. It is one pass without recursion
// that jumps through strings with skipString, as the round scanner does, so
// any input is safe, and a document of strings costs little more than a
// memory scan. Brackets inside strings do not count.
//
// Text that is not JSON may be judged either way; what matters is that
// gjson.Valid, which stops at the first byte that is wrong, never goes
// deeper than this count on text judged not too deep.
func nestsTooDeep(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = skipString(s, i) - 1
		case '[', '{':
			if depth++; depth > MaxNesting {
				return true
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// validJSON reports whether s is one JSON value nesting at most MaxNesting
// levels. Every validation of a body goes through it or follows a
// nestsTooDeep check, never gjson.Valid alone (see MaxNesting).
func validJSON(s string) bool { return !nestsTooDeep(s) && gjson.Valid(s) }

// validJSONBytes is validJSON over a body, without copying it.
func validJSONBytes(b []byte) bool { return validJSON(unsafeString(b)) }

// tooDeepError is the error of a response that nests deeper than
// MaxNesting levels. Like other malformed JSON in an answer to a request,
// it shows the server took the request in.
func tooDeepError(op string, status int) *Error {
	return &Error{Kind: KindProtocol, Op: op, StatusCode: status, Message: nestingMessage, Err: ErrNestedTooDeep,
		Processed: status >= 200 && status <= 299}
}
