package spec

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that encodes in JSON as seconds (a number),
// so the files read well in any language.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).Seconds())
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s float64
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want seconds as a number: %w", err)
	}
	*d = Duration(s * float64(time.Second))
	return nil
}

func (d Duration) String() string { return time.Duration(d).String() }
