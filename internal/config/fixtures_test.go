package config

// A config file as people write it (the same as cmd/cli's tests).

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
