// Package configfile edits the config file in place (config set, config
// unset): one key at a time, every other byte kept as the user wrote it.
// Reading the configuration is internal/config's.
package configfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The config file is edited as a YAML node tree, one key at a time, and the
// change is written into the file's own text: the lines of the key being
// set or removed change, every other byte stays as the user wrote it
// (comments, blank lines, order, quoting, peers, keys this version does not
// know). The new text is checked against the edited tree: it must decode to
// exactly the same data. When the layout is one the text edit does not
// handle (a flow mapping such as "lab: {space: x}", a block scalar, an
// alias), the tree is encoded instead: the data and the comments are kept,
// the layout is normalised, and the caller says so.

// Doc is the config file as read: its text and its node tree.
type Doc struct {
	src []byte
	// doc is the document node; nil when the file is missing, empty or
	// only comments.
	doc *yaml.Node
}

// Edit is the outcome of one edit.
type Edit struct {
	Out     []byte // the file's new text; the old one when nothing changed
	Changed bool
	// Pruned: Unset removed the last key of a mapping, and the mapping.
	Pruned bool
	// Rewritten says why the file was encoded anew rather than edited in
	// place; "" when it was edited in place.
	Rewritten string
}

var (
	errNotMapping = errors.New("not a mapping")
	// errNoRoundTrip: the edited tree does not encode to text that reads
	// back as itself (odd keys, say); the file is left as it is.
	errNoRoundTrip = errors.New("the file cannot be edited without changing other values")
)

// ShapeError is a config document that is YAML but not a config: more
// than one document, or a top level that is not a mapping.
type ShapeError struct{ msg string }

func (e *ShapeError) Error() string { return e.msg }

// Parse reads a config document. It fails on text that is not YAML,
// that does not decode as data (a key given twice, say), that holds more
// than one document, or whose top level is not a mapping.
func Parse(src []byte) (*Doc, error) {
	doc, err := parseCfgTree(src)
	if err != nil {
		return nil, err
	}
	return &Doc{src: src, doc: doc}, nil
}

func parseCfgTree(src []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, &ShapeError{"it holds more than one YAML document"}
	}
	var data any
	if err := doc.Decode(&data); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null" {
		return nil, nil
	}
	if top.Kind != yaml.MappingNode {
		return nil, &ShapeError{"its top level is not a mapping of keys such as profiles:"}
	}
	return &doc, nil
}

// Empty reports a file that is missing, empty or only comments.
func (d *Doc) Empty() bool { return d.doc == nil }

// top is the document's top mapping, or nil.
func (d *Doc) top() *yaml.Node {
	if d.doc == nil {
		return nil
	}
	return d.doc.Content[0]
}

// Lookup returns the value at path, matching keys as the config is read
// (without regard to case), or nil.
func (d *Doc) Lookup(path ...string) *yaml.Node {
	n := d.top()
	for _, seg := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		i := pickKey(n, seg)
		if i < 0 {
			return nil
		}
		n = n.Content[i+1]
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
	}
	return n
}

// Keys returns the keys of the mapping at path, in lower case, sorted.
func (d *Doc) Keys(path ...string) []string {
	m := d.Lookup(path...)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := strings.ToLower(m.Content[i].Value)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// foldKeys returns the indexes in m.Content of the keys that read as name.
func foldKeys(m *yaml.Node, name string) []int {
	var out []int
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && strings.EqualFold(k.Value, name) {
			out = append(out, i)
		}
	}
	return out
}

// pickKey is the key of m that name walks into: the one spelled exactly
// so, else the first that differs only in case; -1 when there is none.
func pickKey(m *yaml.Node, name string) int {
	idx := foldKeys(m, name)
	for _, i := range idx {
		if m.Content[i].Value == name {
			return i
		}
	}
	if len(idx) > 0 {
		return idx[0]
	}
	return -1
}

// Str and Bool are new scalars.
func Str(v string) *yaml.Node  { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
func Bool(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: v} }

// Set sets the scalar at path (mapping keys from the top), creating the
// mappings on the way.
func (d *Doc) Set(path []string, val *yaml.Node) (*Edit, error) {
	e, doc, err := d.editor()
	if err != nil {
		return nil, err
	}
	if doc.Kind == 0 {
		*doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	m := doc.Content[0]
	valText := e.render(val)
	for i, seg := range path {
		if m.Style&yaml.FlowStyle != 0 {
			where := "the file"
			if i > 0 {
				where = strings.Join(path[:i], ".")
			}
			e.fail("%s is written on one line, in braces", where)
		}
		if i == len(path)-1 {
			idx := foldKeys(m, seg)
			if len(idx) == 0 {
				e.insertEntries(m, path[i:], valText)
				m.Content = append(m.Content, Str(seg), val)
				e.changed = true
				break
			}
			for _, k := range idx {
				old := m.Content[k+1]
				if old.Anchor != "" {
					return nil, fmt.Errorf("%s is anchored (&%s) and may be used elsewhere", strings.Join(path, "."), old.Anchor)
				}
				if sameData(old, val) {
					continue
				}
				nv := *val
				if nv.Tag == "!!str" && old.Kind == yaml.ScalarNode {
					nv.Style = old.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle)
				}
				e.replaceScalar(old, e.render(&nv))
				nv.HeadComment, nv.LineComment, nv.FootComment = old.HeadComment, old.LineComment, old.FootComment
				m.Content[k+1] = &nv
				e.changed = true
			}
			break
		}
		k := pickKey(m, seg)
		if k < 0 {
			e.insertEntries(m, path[i:], valText)
			m.Content = append(m.Content, Str(seg), chain(path[i+1:], val))
			e.changed = true
			break
		}
		child := m.Content[k+1]
		switch {
		case child.Kind == yaml.AliasNode:
			return nil, fmt.Errorf("%s is an alias (*%s) of another entry", strings.Join(path[:i+1], "."), child.Value)
		case child.Kind == yaml.MappingNode:
			m = child
			continue
		case child.Kind == yaml.ScalarNode && child.ShortTag() == "!!null":
			e.insertUnder(m.Content[k], child, path[i+1:], valText)
			nm := chain(path[i+1:], val)
			nm.HeadComment, nm.LineComment, nm.FootComment = child.HeadComment, child.LineComment, child.FootComment
			m.Content[k+1] = nm
			e.changed = true
		default:
			return nil, fmt.Errorf("%s: %w", strings.Join(path[:i+1], "."), errNotMapping)
		}
		break
	}
	return e.finish(doc)
}

// chain is the mappings path[0]: path[1]: ...: val.
func chain(path []string, val *yaml.Node) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if len(path) == 1 {
		n.Content = []*yaml.Node{Str(path[0]), val}
		return n
	}
	n.Content = []*yaml.Node{Str(path[0]), chain(path[1:], val)}
	return n
}

// Unset removes the key at path. With prune, a mapping that the removal
// leaves empty is removed too (one level up only).
func (d *Doc) Unset(path []string, prune bool) (*Edit, error) {
	e, doc, err := d.editor()
	if err != nil {
		return nil, err
	}
	if doc.Kind == 0 {
		return &Edit{Out: d.src}, nil
	}
	var parent *yaml.Node
	parentKey := -1
	m := doc.Content[0]
	for i, seg := range path[:len(path)-1] {
		k := pickKey(m, seg)
		if k < 0 {
			return &Edit{Out: d.src}, nil
		}
		child := m.Content[k+1]
		switch {
		case child.Kind == yaml.AliasNode:
			return nil, fmt.Errorf("%s is an alias (*%s) of another entry", strings.Join(path[:i+1], "."), child.Value)
		case child.Kind == yaml.ScalarNode && child.ShortTag() == "!!null":
			return &Edit{Out: d.src}, nil
		case child.Kind != yaml.MappingNode:
			return nil, fmt.Errorf("%s: %w", strings.Join(path[:i+1], "."), errNotMapping)
		}
		parent, parentKey, m = m, k, child
	}
	idx := foldKeys(m, path[len(path)-1])
	if len(idx) == 0 {
		return &Edit{Out: d.src}, nil
	}
	if m.Style&yaml.FlowStyle != 0 {
		e.fail("%s is written on one line, in braces", strings.Join(path[:len(path)-1], "."))
	}
	for j := len(idx) - 1; j >= 0; j-- {
		k := idx[j]
		if a := m.Content[k+1].Anchor; a != "" {
			return nil, fmt.Errorf("%s is anchored (&%s) and may be used elsewhere", strings.Join(path, "."), a)
		}
		e.removeEntry(m, k)
		m.Content = append(m.Content[:k], m.Content[k+2:]...)
	}
	e.changed = true
	if prune && parent != nil && len(m.Content) == 0 && m.Anchor == "" {
		e.removeKeyLine(parent.Content[parentKey], m)
		parent.Content = append(parent.Content[:parentKey], parent.Content[parentKey+2:]...)
		e.pruned = true
	}
	return e.finish(doc)
}

// sameData reports whether two nodes decode to the same value.
func sameData(a, b *yaml.Node) bool {
	var x, y any
	if a.Decode(&x) != nil || b.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// textEditor collects the text edits that match the tree edits, over the
// original text, with the positions of the original tree.
type textEditor struct {
	src   []byte
	lines []int // lines[i] is the offset of line i (1-based); lines[0] is unused
	eol   string
	step  int // indentation step of nested mappings
	edits []textEdit
	// noSplice says why the text cannot be edited in place; "" while it can.
	noSplice string
	changed  bool
	pruned   bool
}

type textEdit struct {
	from, to int
	text     string
}

// editor parses the text again (the tree to edit; d.doc keeps the
// original) and prepares the text edits.
func (d *Doc) editor() (*textEditor, *yaml.Node, error) {
	doc, err := parseCfgTree(d.src)
	if err != nil {
		return nil, nil, err
	}
	if doc == nil {
		doc = &yaml.Node{}
	}
	e := &textEditor{src: d.src, eol: "\n", step: indentStep(doc)}
	if bytes.Contains(d.src, []byte("\r\n")) {
		e.eol = "\r\n"
	}
	e.lines = []int{0, 0}
	for i, c := range d.src {
		if c == '\n' && i+1 < len(d.src) {
			e.lines = append(e.lines, i+1)
		}
	}
	return e, doc, nil
}

// indentStep is how far the file indents a nested mapping: the first one
// found, else 2.
func indentStep(n *yaml.Node) int {
	if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 {
				if s := v.Content[0].Column - k.Column; s > 0 && s <= 8 {
					return s
				}
			}
		}
	}
	for _, c := range n.Content {
		if s := indentStep(c); s != 2 {
			return s
		}
	}
	return 2
}

func (e *textEditor) fail(format string, args ...any) {
	if e.noSplice == "" {
		e.noSplice = fmt.Sprintf(format, args...)
	}
}

// render is a scalar's text on one line.
func (e *textEditor) render(n *yaml.Node) string {
	b, err := yaml.Marshal(n)
	s := strings.TrimSuffix(string(b), "\n")
	if err != nil || strings.ContainsAny(s, "\r\n") {
		e.fail("a value does not fit on one line")
	}
	return s
}

// lineCount is the number of lines of the text, the last one possibly
// without an end of line.
func (e *textEditor) lineCount() int { return len(e.lines) - 1 }

// lineStart is the offset of line n (1-based); past the last line it is
// the end of the text.
func (e *textEditor) lineStart(n int) int {
	if n >= len(e.lines) {
		return len(e.src)
	}
	return e.lines[n]
}

// lineText is line n without its end of line.
func (e *textEditor) lineText(n int) string {
	s := string(e.src[e.lineStart(n):e.lineStart(n+1)])
	return strings.TrimRight(s, "\r\n")
}

// offset is the byte offset of a node's position (line and column, the
// column counted in characters).
func (e *textEditor) offset(line, col int) (int, bool) {
	if line < 1 || line > e.lineCount() || col < 1 {
		return 0, false
	}
	text := e.lineText(line)
	start := e.lineStart(line)
	if line == 1 && strings.HasPrefix(text, "\ufeff") {
		text, start = text[3:], start+3
	}
	i := 0
	for c := 1; c < col; c++ {
		if i >= len(text) {
			return 0, false
		}
		_, w := utf8.DecodeRuneInString(text[i:])
		i += w
	}
	return start + i, true
}

// scalarSpan is the byte range of a scalar's text (with its tag, if
// written) when it sits on one line in block context, followed by nothing
// but blanks and a comment.
func (e *textEditor) scalarSpan(n *yaml.Node) (int, int, bool) {
	if n.Kind != yaml.ScalarNode && n.Kind != yaml.AliasNode {
		return 0, 0, false
	}
	start, ok := e.offset(n.Line, n.Column)
	if !ok {
		return 0, 0, false
	}
	lineEnd := e.lineStart(n.Line) + len(e.lineText(n.Line))
	rest := string(e.src[start:lineEnd])
	end := -1
	switch {
	case n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return 0, 0, false
	case strings.HasPrefix(rest, `"`):
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\\' {
				i++
			} else if rest[i] == '"' {
				end = i + 1
				break
			}
		}
	case strings.HasPrefix(rest, `'`):
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				end = i + 1
				break
			}
		}
	default:
		end = len(rest)
		for i := 0; i < len(rest); i++ {
			if rest[i] == '#' && i > 0 && (rest[i-1] == ' ' || rest[i-1] == '\t') {
				end = i
				break
			}
		}
		end = len(strings.TrimRight(rest[:end], " \t"))
	}
	if end < 0 {
		return 0, 0, false
	}
	if after := strings.TrimLeft(rest[end:], " \t"); after != "" && (after[0] != '#' || end == len(rest)-len(after)) {
		return 0, 0, false // something other than a comment follows
	}
	text := rest[:end]
	// The span must read back as the node on its own.
	if n.Kind == yaml.AliasNode {
		if text != "*"+n.Value {
			return 0, 0, false
		}
	} else if text != "" {
		var x yaml.Node
		if yaml.Unmarshal([]byte(text), &x) != nil || len(x.Content) != 1 {
			return 0, 0, false
		}
		if c := x.Content[0]; c.Kind != yaml.ScalarNode || c.Value != n.Value || c.ShortTag() != n.ShortTag() {
			return 0, 0, false
		}
	} else if n.Value != "" {
		return 0, 0, false
	}
	return start, start + end, true
}

// endLine is the last line of a node's text in block context.
func (e *textEditor) endLine(n *yaml.Node) (int, bool) {
	switch n.Kind {
	case yaml.ScalarNode, yaml.AliasNode:
		if _, _, ok := e.scalarSpan(n); ok {
			return n.Line, true
		}
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0 {
			return e.endLine(n.Content[len(n.Content)-1])
		}
	}
	return 0, false
}

// keyIndent is the text before a key on its line, when that is only
// spaces: the indentation of its mapping.
func (e *textEditor) keyIndent(k *yaml.Node) (string, bool) {
	start, ok := e.offset(k.Line, k.Column)
	if !ok {
		return "", false
	}
	pre := string(e.src[e.lineStart(k.Line):start])
	if strings.Trim(pre, " ") != "" {
		return "", false
	}
	return pre, true
}

// entriesText is path[0]: path[1]: ... : val as block lines at indent.
func (e *textEditor) entriesText(indent string, path []string, valText string) string {
	var b strings.Builder
	for i, seg := range path {
		b.WriteString(indent + strings.Repeat(" ", i*e.step) + e.render(Str(seg)) + ":")
		if i == len(path)-1 {
			b.WriteString(" " + valText)
		}
		b.WriteString(e.eol)
	}
	return b.String()
}

// insertAfterLine inserts whole lines after line n (0: at the end of a
// text that has no content).
func (e *textEditor) insertAfterLine(n int, text string) {
	at := e.lineStart(n + 1)
	if at == len(e.src) && len(e.src) > 0 && e.src[len(e.src)-1] != '\n' {
		text = e.eol + text
	}
	e.edits = append(e.edits, textEdit{at, at, text})
}

// insertEntries adds path: ... : val as the last entry of mapping m.
func (e *textEditor) insertEntries(m *yaml.Node, path []string, valText string) {
	if m.Line == 0 { // the file had no content: append
		e.insertAfterLine(e.lineCount(), e.entriesText("", path, valText))
		return
	}
	if m.Style&yaml.FlowStyle != 0 || len(m.Content) == 0 {
		e.fail("a mapping is written on one line")
		return
	}
	indent, ok := e.keyIndent(m.Content[0])
	last, ok2 := e.endLine(m.Content[len(m.Content)-1])
	if !ok || !ok2 {
		e.fail("a mapping's layout is not one key per line")
		return
	}
	e.insertAfterLine(e.skipComments(last, len(indent)), e.entriesText(indent, path, valText))
}

// skipComments moves past the comment lines after line n that are
// indented at least as deep as indent, and the blank lines among them:
// they close the block that ends on line n.
func (e *textEditor) skipComments(n, indent int) int {
	for next := n + 1; next <= e.lineCount(); next++ {
		t := e.lineText(next)
		body := strings.TrimLeft(t, " ")
		if strings.TrimSpace(t) == "" {
			continue
		}
		if !strings.HasPrefix(body, "#") || len(t)-len(body) < indent {
			break
		}
		n = next
	}
	return n
}

// insertUnder writes path: ... : val under key k, whose value is empty.
func (e *textEditor) insertUnder(k, null *yaml.Node, path []string, valText string) {
	indent, ok := e.keyIndent(k)
	from, to, ok2 := e.scalarSpan(null)
	if !ok || !ok2 || from != to || null.Line != k.Line {
		e.fail("an empty value is written as ~ or null")
		return
	}
	e.insertAfterLine(k.Line, e.entriesText(indent+strings.Repeat(" ", e.step), path, valText))
}

// replaceScalar writes a new value over an old scalar.
func (e *textEditor) replaceScalar(old *yaml.Node, valText string) {
	from, to, ok := e.scalarSpan(old)
	if !ok {
		e.fail("the old value is not a one-line scalar")
		return
	}
	if from > 0 && e.src[from-1] == ':' {
		valText = " " + valText // "key:" with no value
	}
	e.edits = append(e.edits, textEdit{from, to, valText})
}

// removeEntry removes the lines of the entry at m.Content[i], but for the
// comment lines among them.
func (e *textEditor) removeEntry(m *yaml.Node, i int) {
	k, v := m.Content[i], m.Content[i+1]
	_, ok := e.keyIndent(k)
	last, ok2 := e.endLine(v)
	if !ok || !ok2 || m.Style&yaml.FlowStyle != 0 {
		e.fail("the entry is not on lines of its own")
		return
	}
	for n := k.Line; n <= last; n++ {
		if n == k.Line || !strings.HasPrefix(strings.TrimSpace(e.lineText(n)), "#") {
			e.edits = append(e.edits, textEdit{e.lineStart(n), e.lineStart(n + 1), ""})
		}
	}
}

// removeKeyLine removes the line of key k whose mapping m has been
// emptied (its entries' lines are removed already).
func (e *textEditor) removeKeyLine(k, m *yaml.Node) {
	_, ok := e.keyIndent(k)
	if !ok || m.Style&yaml.FlowStyle != 0 || m.Line == k.Line {
		e.fail("the key is not on a line of its own")
		return
	}
	rest := strings.TrimSpace(e.lineText(k.Line))
	if i := strings.Index(rest, ":"); i < 0 || (strings.TrimSpace(rest[i+1:]) != "" && !strings.HasPrefix(strings.TrimSpace(rest[i+1:]), "#")) {
		e.fail("the key's line holds more than the key")
		return
	}
	e.edits = append(e.edits, textEdit{e.lineStart(k.Line), e.lineStart(k.Line + 1), ""})
}

// finish applies the text edits and checks the result against the edited
// tree; when they cannot be applied or do not match, it encodes the tree.
func (e *textEditor) finish(doc *yaml.Node) (*Edit, error) {
	if !e.changed {
		return &Edit{Out: e.src}, nil
	}
	res := &Edit{Changed: true, Pruned: e.pruned}
	if e.noSplice == "" {
		out, ok := e.apply()
		if ok && readsAs(out, doc) {
			res.Out = out
			return res, nil
		}
		e.fail("the edited text did not read back as intended")
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(e.step)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if !readsAs(b.Bytes(), doc) {
		return nil, errNoRoundTrip
	}
	res.Out, res.Rewritten = b.Bytes(), e.noSplice
	return res, nil
}

func (e *textEditor) apply() ([]byte, bool) {
	edits := append([]textEdit(nil), e.edits...)
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	out := append([]byte(nil), e.src...)
	limit := len(out)
	for _, ed := range edits {
		if ed.to > limit || ed.from > ed.to {
			return nil, false // overlapping edits
		}
		limit = ed.from
		out = append(out[:ed.from:ed.from], append([]byte(ed.text), out[ed.to:]...)...)
	}
	return out, true
}

// readsAs reports whether text is one config document with the same
// nodes as want: kinds, tags, values, anchors and aliases, in order. It is
// stricter than comparing the decoded data, where keys such as 0 and 00
// fold into one.
func readsAs(text []byte, want *yaml.Node) bool {
	got, err := parseCfgTree(text)
	if err != nil {
		return false
	}
	if got == nil {
		top := want.Content[0]
		return top.Kind == yaml.MappingNode && len(top.Content) == 0
	}
	return sameTree(got, want)
}

func sameTree(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.Anchor != b.Anchor || len(a.Content) != len(b.Content) {
		return false
	}
	switch a.Kind {
	case yaml.AliasNode:
		return a.Value == b.Value
	case yaml.ScalarNode:
		if a.Value != b.Value || a.ShortTag() != b.ShortTag() {
			return false
		}
	case yaml.MappingNode, yaml.SequenceNode:
		if a.ShortTag() != b.ShortTag() {
			return false
		}
	}
	for i := range a.Content {
		if !sameTree(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
