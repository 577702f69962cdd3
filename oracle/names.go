package oracle

import "fmt"

// enumName is names[v], the name of value v of an enumeration, or
// "kind(v)" for a value without one.
func enumName(names []string, v uint8, kind string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", kind, v)
}
