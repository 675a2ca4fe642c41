package github

import "fmt"

// WorkflowJob is a GitHub Actions job, as GET /repos/o/r/actions/jobs/ID
// returns it and the workflow_job webhook carries it: the same object.
type WorkflowJob struct {
	ID           int64    `json:"id"`
	RunID        int64    `json:"run_id"`
	RunAttempt   int      `json:"run_attempt"`
	Name         string   `json:"name"`
	WorkflowName string   `json:"workflow_name"`
	Status       string   `json:"status"`
	Conclusion   *string  `json:"conclusion"`
	HeadSHA      string   `json:"head_sha"`
	HeadBranch   *string  `json:"head_branch"`
	HTMLURL      string   `json:"html_url"`
	RunnerName   *string  `json:"runner_name"`
	Labels       []string `json:"labels"`
	Steps        []struct {
		Name       string  `json:"name"`
		Number     int     `json:"number"`
		Conclusion *string `json:"conclusion"`
	} `json:"steps"`
}

// workflowJobData is the data projection of a workflow_job event:
// FailedStep names the first step that failed (FailedSteps all of them,
// at most 10), so a watcher knows which job and step broke, not only the
// run.
type workflowJobData struct {
	Action       string   `json:"action"`
	Name         string   `json:"name"`
	WorkflowName string   `json:"workflowName,omitempty"`
	Status       string   `json:"status,omitempty"`
	Conclusion   *string  `json:"conclusion"`
	Repo         string   `json:"repo"`
	Number       int      `json:"number,omitempty"`
	JobID        int64    `json:"jobId,omitempty"`
	RunID        int64    `json:"runId,omitempty"`
	RunAttempt   int      `json:"runAttempt,omitempty"`
	HeadBranch   string   `json:"headBranch,omitempty"`
	HeadSHA      string   `json:"headSha,omitempty"`
	URL          string   `json:"url,omitempty"`
	FailedStep   string   `json:"failedStep,omitempty"`
	FailedSteps  []string `json:"failedSteps,omitempty"`
	RunnerName   string   `json:"runnerName,omitempty"`
	Labels       []string `json:"labels,omitempty"`
	MergeQueue   bool     `json:"mergeQueue,omitempty"`
	whTrust
}

// jobData projects a job of repo (PR number, 0 for none) and its summary
// ("target": o/r#n or "o/r (branch)").
func jobData(action, repo string, number int, j *WorkflowJob, target string, t whTrust) (workflowJobData, string) {
	name := whOneLine(j.Name, 200)
	if name == "" {
		name = "job"
	}
	d := workflowJobData{
		Action: action, Name: name, WorkflowName: whOneLine(j.WorkflowName, 200), Status: whOneLine(j.Status, 40),
		Conclusion: whNonEmpty(j.Conclusion), Repo: repo, Number: number, JobID: max(j.ID, 0),
		RunID: max(j.RunID, 0), RunAttempt: max(j.RunAttempt, 0), HeadBranch: whCapText(whDeref(j.HeadBranch)),
		HeadSHA: whCapText(j.HeadSHA), URL: whCapText(j.HTMLURL), RunnerName: whOneLine(whDeref(j.RunnerName), 200),
		whTrust: t,
	}
	for _, l := range j.Labels {
		if len(d.Labels) == 10 {
			break
		}
		d.Labels = append(d.Labels, whOneLine(l, 100))
	}
	for _, st := range j.Steps {
		if st.Conclusion != nil && *st.Conclusion == "failure" && len(d.FailedSteps) < 10 {
			d.FailedSteps = append(d.FailedSteps, whOneLine(st.Name, 200))
		}
	}
	if len(d.FailedSteps) > 0 {
		d.FailedStep = d.FailedSteps[0]
	}
	outcome := action
	if d.Conclusion != nil {
		outcome = *d.Conclusion
	}
	job := fmt.Sprintf("%q", name)
	if d.WorkflowName != "" {
		job += fmt.Sprintf(" (%s)", d.WorkflowName)
	}
	summary := fmt.Sprintf("Job %s %s for %s", job, outcome, target)
	if d.FailedStep != "" {
		summary = fmt.Sprintf("Job %s failed at step %q for %s", job, d.FailedStep, target)
	}
	return d, summary
}

// WorkflowJobEventData is the data and summary of a
// github.workflow_job.completed event of PR number of repo built from REST
// (local-gh's poll): the projection the webhook's workflow_job events
// carry, with no actor (a poll does not see who ran it).
func WorkflowJobEventData(repo string, number int, j *WorkflowJob) (any, string) {
	return jobData("completed", repo, number, j, fmt.Sprintf("%s#%d", repo, number), whTrust{})
}
