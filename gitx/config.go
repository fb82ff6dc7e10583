package gitx

import (
	"context"
	"errors"
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
