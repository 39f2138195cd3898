package configfile

// Config files as people write them (the same as cmd/cli's tests).

const twoProfiles = `
default_profile: prod
profiles:
  prod:
    kibana_url: https://prod.example.com
    space: security
    poll_interval: 30s
  lab:
    kibana_url: http://localhost:5601
    max_wait: 10m
`

// commented is a config file as a person writes it, with comments at the
// top, inline, and inside peers (a section only ever written by hand).
const commented = `# a2a-courier: my deployments
# (kept by hand, edited with config set)

default_profile: prod   # the usual one

profiles:
  # production, read only
  prod:
    kibana_url: https://prod.example.com   # behind the VPN
    space: security
    poll_interval: 30s

  lab:
    kibana_url: "http://localhost:5601"
    max_wait: 10m
`

const commentedPeers = `
# agents outside Kibana
peers:
  research:   # the research team's agent
    url: https://research.example.com/a2a
    token_env: RESEARCH_TOKEN   # exported by direnv
    # no_stream: true
  echo:
    url: http://127.0.0.1:9999
    protocol: "1.0"
# end of file
`
