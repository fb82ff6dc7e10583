package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrEmpty is a request with no JSON value at all.
var ErrEmpty = errors.New("the body is empty: send a JSON object")

// Decode reads a request's one JSON value into v, as the API reads a
// body and MCP a tool's arguments: an unknown field, a value of the
// wrong type or more than one value is refused, as a FieldError naming
// the field ("body" for the whole). An error of r comes back as it is.
func Decode(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil:
		if dec.More() {
			return &FieldError{Field: "body", Err: errors.New("the body holds more than one JSON value")}
		}
		return nil
	case errors.Is(err, io.EOF):
		return &FieldError{Field: "body", Err: ErrEmpty}
	case errors.As(err, &typeErr):
		return &FieldError{Field: typeErr.Field, Err: fmt.Errorf("field %q must be %s, not %s", typeErr.Field, typeErr.Type, typeErr.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &FieldError{Field: field, Err: fmt.Errorf("unknown field %q", field)}
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return &FieldError{Field: "body", Err: fmt.Errorf("the body is not valid JSON: %v", err)}
	}
	return err
}
