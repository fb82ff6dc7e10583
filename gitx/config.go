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
