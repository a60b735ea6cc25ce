package alloc

// Host is one launch unit of a job: all of its processes on one node.
type Host struct {
	Node string `json:"node"`
	// NP is how many of the job's processes run on Node.
	NP int `json:"procs"`
}
