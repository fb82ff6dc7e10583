package gitx

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ConfigValues reads the git configuration that applies in dir (system,
// user and repository levels, includes followed) for the keys that
// pattern (a regular expression, as `git config --get-regexp` takes)
// matches: key (lower case, as git reports it) -> last value.
func ConfigValues(ctx context.Context, dir, pattern string) (map[string]string, error) {
	out, err := run(ctx, command{dir: dir, args: []string{"config", "--null", "--get-regexp", pattern}, readOnly: true})
	values := map[string]string{}
	if err != nil {
		if gerr := (*Error)(nil); errors.As(err, &gerr) && gerr.Status == 1 {
			return values, nil // no such key
		}
		return nil, err
	}
	for _, entry := range strings.Split(out, "\x00") {
		if key, value, ok := strings.Cut(entry, "\n"); ok {
			values[key] = value
		} else if entry != "" {
			values[entry] = "true" // a key with no value is a boolean true
		}
	}
	return values, nil
}

// Author is who git in dir writes as a commit's author (config or
// GIT_AUTHOR_* variables: `git var GIT_AUTHOR_IDENT`); ok is false when
// git knows none.
func Author(ctx context.Context, dir string) (name, email string, ok bool) {
	out, err := run(ctx, command{dir: dir, args: []string{"var", "GIT_AUTHOR_IDENT"}, readOnly: true})
	name, rest, found := strings.Cut(strings.TrimSpace(out), " <")
	email, _, closed := strings.Cut(rest, ">")
	return name, email, err == nil && found && closed && name != ""
}

// Committed reads the file that spec names in the object store of the
// repository at dir (HEAD:.apex.toml, say), with at most limit bytes;
// found is false when there is no such file. Nothing is read from a
// working tree, nor through a symbolic link: a committed link reads as
// the path it holds.
func Committed(ctx context.Context, dir, spec string, limit int64) (text string, found bool, err error) {
	check := command{dir: dir, args: []string{"cat-file", "--batch-check"}, readOnly: true, stdin: strings.NewReader(spec + "\n")}
	out, err := run(ctx, check)
	if err != nil {
		return "", false, err
	}
	fields := strings.Fields(out)
	switch {
	case len(fields) == 2 && fields[1] == "missing":
		return "", false, nil
	case len(fields) != 3 || fields[1] != "blob":
		return "", false, fmt.Errorf("%s is not a file: git cat-file says %q", spec, strings.TrimSpace(out))
	}
	if size, _ := strconv.ParseInt(fields[2], 10, 64); size > limit {
		return "", false, fmt.Errorf("%s has %d bytes, more than %d", spec, size, limit)
	}
	text, err = run(ctx, command{dir: dir, args: []string{"cat-file", "blob", fields[0]}, readOnly: true})
	return text, err == nil, err
}
