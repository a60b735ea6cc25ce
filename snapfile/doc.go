// Package snapfile is the file format of `shoal operator snapshot save`:
// a copy of the replicated state that `restore` can load into any cluster.
//
// A file is a text line naming the format and its version, a JSON header
// line, and the payload, raft's user snapshot of the FSM:
//
//	shoal-snapshot 1
//	{"fsm_version":1,"raft_index":812,"raft_term":3,"size":20411,"sha256":"…","taken_at":"…"}
//	<size bytes of payload>
//
// The header holds nothing of the cluster it was taken from (no node
// names, no raft configuration, no token), so a backup restores into a
// fresh cluster; the checksum and the size let a restore refuse a
// truncated or corrupt file before anything changes. The package is pure:
// it reads and writes bytes and never a clock or a file.
package snapfile
