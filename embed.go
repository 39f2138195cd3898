// Package a2acourier holds files of the repository root that the binary
// embeds, so that the SKILL.md a user reads in the repository and the one
// `a2a-courier skill install` writes are the same file.
package a2acourier

import _ "embed"

// SkillMD is the repository's SKILL.md.
//
//go:embed SKILL.md
var SkillMD []byte
