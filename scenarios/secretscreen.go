package scenarios

// TypesSecrets reports whether a script types a secret with type_text:
// the runtime then reads the focused accessible over AT-SPI, so the field
// the secret goes into can be masked on screen. A goal run reads it
// anyway.
func (s *Scenario) TypesSecrets() bool {
	for _, st := range s.Steps {
		if st.Tool != "type_text" {
			continue
		}
		ref, _ := st.Args["ref"].(string)
		if p, ok := s.Provides[ref]; ok && p.Secret != nil {
			return true
		}
	}
	return false
}
