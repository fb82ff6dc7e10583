package hostexec

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// startTime is a process's start time (clock ticks since boot, from
// /proc), or 0 when it is not running.
func startTime(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis; starttime is field 22.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return 0
	}
	start, _ := strconv.ParseInt(fields[19], 10, 64)
	return start
}
