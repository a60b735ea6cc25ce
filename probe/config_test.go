package probe

import (
	"strings"
	"testing"
	"time"
)

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.SampleInterval = 10 * time.Millisecond
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "SampleInterval = 10ms, want 100ms..1m0s") {
		t.Errorf("Validate() = %v", err)
	}
	c = DefaultConfig()
	c.Budget.TestBytes = 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "TestBytes") {
		t.Errorf("Validate() = %v", err)
	}
}
