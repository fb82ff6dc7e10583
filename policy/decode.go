package policy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"

	"github.com/git-apex/git-apex/exitcode"
)

// Error is an invalid policy: where, and what is wrong.
type Error struct {
	File string
	Line int    // 0 when unknown
	Col  int    // 0 when unknown
	Key  string // dotted key at fault, when there is one
	Msg  string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
		if e.Col > 0 {
			loc += ":" + strconv.Itoa(e.Col)
		}
	}
	if e.Key != "" {
		return fmt.Sprintf("invalid policy %s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("invalid policy %s: %s", loc, e.Msg)
}

// ExitCode reports that an invalid policy exits with code 4.
func (e *Error) ExitCode() int { return exitcode.Policy }

// Load reads the policy at file. When the file does not exist and
// mustExist is false, the built-in defaults are returned.
func Load(file string, mustExist bool) (*Policy, error) {
	data, err := readPolicyFile(file)
	if errors.Is(err, os.ErrNotExist) && !mustExist {
		return Default(), nil
	}
	if err != nil {
		return nil, &Error{File: file, Msg: "cannot read it: " + err.Error()}
	}
	p, err := Decode(file, string(data))
	if err != nil {
		return nil, err
	}
	p.File = file
	return p, nil
}

// MaxSize bounds what is read of a policy file, in bytes.
const MaxSize = 1 << 20

// readPolicyFile reads a policy file that must be a regular file: a FIFO
// or a device would block, or never end. It never waits on the open.
func readPolicyFile(file string) ([]byte, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, errors.Unwrap(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file (%s)", info.Mode().Type())
	}
	if info.Size() > MaxSize {
		return nil, fmt.Errorf("it is larger than %d bytes", MaxSize)
	}
	return io.ReadAll(io.LimitReader(f, MaxSize+1))
}

// typeError matches the decoder's messages for values of the wrong type.
var typeError = lazyRegexp(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// Decode decodes policy text strictly over the defaults and validates it.
// file is used only in messages.
func Decode(file, text string) (*Policy, error) {
	p := Default()
	md, err := toml.Decode(text, p)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			line, col := lineCol(text, perr.Position)
			return nil, &Error{File: file, Line: line, Col: col, Key: perr.LastKey, Msg: perr.Message}
		}
		if m := typeError().FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &Error{File: file, Line: line, Key: m[2], Msg: describeTypeError(m[3])}
		}
		return nil, &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		key := undecoded[0]
		msg := fmt.Sprintf("unknown table [%s]", key)
		if md.Type(key...) != "Hash" {
			table := "the top level"
			if len(key) > 1 {
				table = "[" + strings.Join(key[:len(key)-1], ".") + "]"
			}
			msg = fmt.Sprintf("unknown key %q in %s", key[len(key)-1], table)
		}
		return nil, &Error{File: file, Line: keyLine(text, key), Msg: msg + "; see the policy reference in the README"}
	}
	if err := p.validate(); err != nil {
		err.File = file
		err.Line = keyLine(text, splitKey(err.Key))
		return nil, err
	}
	return p, nil
}

// lineCol places a parse error by its byte offset. The decoder counts an
// error at the end of a line as on the next line.
func lineCol(text string, pos toml.Position) (int, int) {
	if pos.Start <= 0 || pos.Start > len(text) {
		return pos.Line, pos.Col
	}
	before := text[:pos.Start]
	return strings.Count(before, "\n") + 1, pos.Start - strings.LastIndexByte(before, '\n')
}

// describeTypeError rewrites the decoder's "incompatible types" message in
// the policy's words.
func describeTypeError(msg string) string {
	const prefix = "incompatible types: TOML value has type "
	if rest, ok := strings.CutPrefix(msg, prefix); ok {
		if got, want, ok := strings.Cut(rest, "; destination has type "); ok {
			return fmt.Sprintf("expected %s, found %s", want, got)
		}
	}
	return msg
}

// keyLine finds the line that sets key (a dotted path), for keys the
// decoder does not place: it follows [table] headers and dotted keys.
// It returns 0 when it cannot tell.
func keyLine(text string, key []string) int {
	table := []string{}
	best := 0
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") {
			header := strings.Trim(line, "[] \t")
			if j := strings.IndexByte(header, '#'); j >= 0 {
				header = strings.TrimRight(strings.Trim(header[:j], "[] \t"), "]")
			}
			table = splitKey(header)
			if slices.Equal(table, key) {
				best = i + 1
			}
			continue
		}
		name, _, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		full := append(slices.Clone(table), splitKey(name)...)
		if slices.Equal(full, key) {
			return i + 1
		}
		if len(full) < len(key) && slices.Equal(full, key[:len(full)]) {
			best = i + 1 // an inline table that holds the key
		}
	}
	return best
}

// splitKey splits a dotted TOML key, removing quotes and spaces.
func splitKey(s string) []string {
	var parts []string
	for _, p := range strings.Split(s, ".") {
		parts = append(parts, strings.Trim(strings.TrimSpace(p), `"'`))
	}
	return parts
}
