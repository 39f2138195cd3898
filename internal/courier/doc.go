// Package courier is the task engine: it carries one task to an agent and
// its reply back, and keeps the product's promise, never send twice and
// always bring the reply back, whoever works on the task (send in the
// foreground, the detached worker) and whatever happens to the connection.
//
// The command line resolves the configuration, the agent and its card, and
// reads the message; it hands the engine a Message and gets records and
// typed errors back. The engine prints nothing, reads no environment and
// never exits: what it needs from the process comes in the Courier's
// fields.
//
// The path of one task:
//
//	send-async / send                       (cmd/cli: argv → Message)
//	  Courier.Submit                        submit.go: contextId-first; messageId and contextId named,
//	    place                               the context placed (rounds before, the task answered),
//	    Store.Lock, create                  the lock taken, the record written before anything leaves:
//	                                        queued, text in it, whoever sends it
//	  send-async: Task.HandOff              the lock let go; ensureWorker → spawn (spawn.go):
//	                                        the same binary, setsid, stdin /dev/null, the log,
//	                                        the credential on descriptor 3, the environment's secrets left out
//	    worker: Courier.Serve               worker.go: the worker lock, claims by file-system events and rescans
//	      worker.claim → Courier.Run        each task under its record's lock
//	  send: Task.Foreground                 task.go: the same code in the foreground (WatchCancel for cancel),
//	                                        then the hand-off rules: Drop, HandOff, or the outcome
//	    run.load                            runner.go: the record, its identity, the agent's client
//	    run.decide                          send, or recover by reading only; end a canceled or empty task
//	    run.begin                           a reader counts itself; a sender writes nothing yet
//	    run.follow                          Deliver; events → run.onEvent → the record (sending → working)
//	      run.leaving                       BeforeSend, once connected and before the request is written:
//	                                        queued → sending, text out of the record: never sent again
//	      run.resend                        retry.go: a 429/503 refusal back to queued, sent again as asked
//	    run.settle                          settle.go: completed, failed, rejected, canceled, input_required,
//	                                        expired (lost), or handed off (queued again / a worker reads)
//	  result: Courier.Wait, Revive          result.go: the record watched; a dead worker replaced
//	  fetch: Courier.FetchKibana, Fetch     fetch.go, fetchone.go: an outcome read without a worker, its
//	                                        reply kept, written into the local record when it may be (writeFetched)
//	  cancel: StopWayOf, Courier.Cancel     cancel.go: how the run can be stopped; the marker, the holder
//	                                        ends the task
//
// A Kibana agent's card is cached (KibanaCard) for the max-age the server
// gives it; a run forgets it when the send shows it stale: the server does
// not stream though the card says so, or the agent is not found
// (forgetCard). Other failures keep it.
//
// Every write of a record goes through store.Handle.Update, which enforces
// the record's state machine (store/machine.go): the engine only ever asks
// for legal moves, and a write that tries another is refused. The state
// itself changes only through the record's transitions (store/transition.go:
// Send, Requeue, Work, Finish, Cancel).
package courier
