package alloc

// HostSlots is one line of a user's hostfile: a node the job may use and
// how many of its processes go there.
type HostSlots struct {
	Host  string `json:"host"`
	Slots int    `json:"slots"` // 0 = as many as placement finds
}

// PENeed asks for PerProc processing elements of Kind (e.g. "gpu") for
// every process. PerProc 0 means the node must have at least one, with no
// per-process count.
type PENeed struct {
	Kind    string `json:"kind"`
	PerProc int    `json:"per_proc"`
}
