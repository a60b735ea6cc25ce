// Package docs holds shoal's documentation as Markdown: docs/user for those
// who run jobs, docs/admin for those who run the agents, docs/design for how
// it works, docs/dev for those who change it, and results.md for the
// measured figures. Its tests keep the documentation honest: every link and
// every path it names resolves, and no page speaks of a machine's own paths.
package docs
