package hostexec

// A Group is the process group a command ran in (Command.Started names
// its leader): its ID (the leader's PID) and the leader's start time. A
// pool lease records its task's, so that what the task left running
// when its batch was killed can be found and ended later, after its
// leader has gone too (see Members).
type Group struct {
	ID    int   `json:"id"`
	Start int64 `json:"start"`
}

// GroupOf is the group whose leader is pid, just started. The leader may
// have ended already (a command that put a child in the background and
// exited at once) without being reaped: its start time still names the
// group.
func GroupOf(pid int) Group { return Group{ID: pid, Start: startTimeOf(pid, true)} }

// Members are the processes still in g: those in the process group g.ID
// that started no earlier than its leader, so that a group whose ID the
// kernel has handed on since (possible only once every member ended) is
// not taken for it. Zombies are left out. On Linux it reads /proc;
// elsewhere it finds only the leader.
func (g Group) Members() []Process {
	if g.ID <= 0 {
		return nil
	}
	return Find([]Trace{{Group: g}})[0]
}
