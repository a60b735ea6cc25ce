//go:build race

package testcluster

const raceBuild = true
