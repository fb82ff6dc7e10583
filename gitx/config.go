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

// Author is who git would write as a commit's author (its
// config's user.name and user.email, or GIT_AUTHOR_NAME and
// GIT_AUTHOR_EMAIL) in dir, as `git var GIT_AUTHOR_IDENT` finds it; ok
// is false when git knows none.
func Author(ctx context.Context, dir string) (name, email string, ok bool) {
	out, err := run(ctx, command{dir: dir, args: []string{"var", "GIT_AUTHOR_IDENT"}, readOnly: true})
	if err != nil {
		return "", "", false
	}
	name, rest, found := strings.Cut(strings.TrimSpace(out), " <")
	email, _, closed := strings.Cut(rest, ">")
	return name, email, found && closed && name != ""
}
