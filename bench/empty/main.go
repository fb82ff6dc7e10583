// Command empty does nothing: it is the process floor of a Go program,
// the baseline of the bench's --version row.
package main

func main() {}
