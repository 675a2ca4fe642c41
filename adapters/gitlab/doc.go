// Package gitlab is sentinel-adapter-gitlab: a third-party sentinel
// provider for GitLab merge requests, written against the adapter protocol
// only (package kit) and built as its own module.
//
// Subjects are gitlab:<group>/<project>!<iid> (a merge request; groups may
// nest) and gitlab:<group>/<project> (every merge request of the project).
// Events: gitlab.merge_request.{merged,closed,reopened,updated},
// gitlab.pipeline.completed (a worst-of rollup of the head commit's
// finished pipelines: failure wins, success when all succeeded or were
// skipped, else neutral), gitlab.note.created and
// gitlab.approval.{approved,revoked}.
//
// It polls the GitLab REST API v4 with conditional requests (If-None-Match
// on the ETag GitLab answers, so a quiet merge request costs 304s), with the
// token from setup (field token) or GITLAB_TOKEN, against https://gitlab.com
// or a self-managed instance (field baseUrl, https only). All poll state
// travels in the cursor; the first poll of a sentinel sets the baseline and
// reports nothing.
package gitlab
