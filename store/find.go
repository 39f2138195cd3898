package store

// FindTask returns the newest live record of s that bears the agent's task id
// taskID (the record that followed the task, or a queued answer to it: send
// --task carries the id too) and that where accepts (nil: any), or
// ErrNotFound. Damaged records are skipped: they are no task's. A task id is
// the agent's (up to 255 characters, longer than a contextId may be), so no
// record file bears its name: this is the one lookup of a record by it.
// (A function, not a method: Store has enough of those.)
func FindTask(s *Store, taskID string, where func(*Record) bool) (*Record, error) {
	if taskID == "" {
		return nil, ErrNotFound
	}
	recs, _ := s.List() // newest first
	for _, r := range recs {
		if r.TaskID == taskID && (where == nil || where(r)) {
			return r, nil
		}
	}
	return nil, ErrNotFound
}
