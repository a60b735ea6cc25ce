// Package apitest helps tests pin the HTTP API's JSON: Fill gives every
// field of a wire type a value (so omitempty keys show), Keys lists the key
// paths of a JSON document, and Golden compares such lists with a file a
// -rewrite flag regenerates.
//
//	var j api.Job
//	apitest.Fill(&j)
//	b, _ := json.Marshal(j)
//	keys, _ := apitest.Keys(b) // "attempts[].exit_code", "spec.elastic.min_np", ...
package apitest
