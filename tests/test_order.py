"""Queue orders of schedulers/order.py."""

from wattsched.schedulers.order import Fcfs, QueueOrder
from wattsched.schedulers.pieces import REGISTRY
from wattsched.schedulers.state import ClusterView, QueuedJob

fcfs = Fcfs()


def job(job_id: str, subtime_s: float, res: int = 1) -> QueuedJob:
    return QueuedJob(job_id, res=res, walltime_s=10.0, subtime_s=subtime_s)


VIEW = ClusterView.idle_machine(4)


def test_fcfs_sorts_by_submission_time():
    jobs = [job("a", 5.0), job("b", 1.0), job("c", 3.0)]
    assert [j.id for j in fcfs.sort(jobs, VIEW)] == ["b", "c", "a"]


def test_fcfs_keeps_arrival_order_among_equal_submission_times():
    # Batsim submits same-time jobs sorted by id string (w0!10 before w0!9): keep that order
    jobs = [job("w0!10", 7.0), job("w0!9", 7.0), job("w0!1", 2.0), job("w0!11", 7.0)]
    assert [j.id for j in fcfs.sort(jobs, VIEW)] == ["w0!1", "w0!10", "w0!9", "w0!11"]


def test_a_new_order_is_a_static_key():
    class WidestFirst(QueueOrder):
        name = "widest-first"
        static = True

        def static_key(self, job: QueuedJob) -> int:
            return -job.res

    jobs = [job("a", 0.0, res=1), job("b", 1.0, res=3), job("c", 2.0, res=3)]
    assert [j.id for j in WidestFirst().sort(jobs, VIEW)] == ["b", "c", "a"]
    assert fcfs.name == "fcfs" and REGISTRY["order"]["fcfs"] is Fcfs


def test_the_base_order_is_arrival_order():
    jobs = [job("a", 5.0), job("b", 1.0)]
    assert [j.id for j in QueueOrder().sort(jobs, VIEW)] == ["a", "b"]


class LeastUsageFirst(QueueOrder):
    """A toy fair-share: the jobs of the user with the fewest host-seconds used so far come first, usage
    charged from the start and completion events every piece hears."""

    name = "least-usage-first"

    def __init__(self) -> None:
        self.usage: dict[str | None, float] = {}
        self.starts: list[tuple[str, str, int | None]] = []

    def on_started(self, job, view) -> None:
        self.starts.append((job.id, str(job.alloc), job.pstate))

    def on_completed(self, job, state, view) -> None:
        self.usage[job.user] = self.usage.get(job.user, 0.0) + len(job.alloc) * (view.now_s - job.start_s)

    def sort(self, jobs, view):
        return sorted(jobs, key=lambda j: self.usage.get(j.user, 0.0))


def test_an_order_reads_per_user_usage_from_start_and_completion_events():
    from procset import ProcSet

    from wattsched.schedulers.backfill import FcfsNoBackfill
    from wattsched.schedulers.core import PolicyScheduler
    from wattsched.schedulers.state import JobState, StartJob

    order = LeastUsageFirst()
    policy = PolicyScheduler(order=order, backfill=FcfsNoBackfill())
    policy.start(2)
    policy.on_submitted(QueuedJob("a1", 2, 100.0, 0.0, user="alice"))
    assert policy.schedule() == [StartJob("a1", ProcSet((0, 1)))]
    assert order.starts == [("a1", "0-1", 0)]  # heard with its hosts and pstate
    policy.set_time(10.0)
    policy.on_submitted(QueuedJob("a2", 2, 100.0, 10.0, user="alice"))  # alice's arrives first
    policy.on_submitted(QueuedJob("b1", 2, 100.0, 11.0, user="bob"))
    assert policy.schedule() == []
    policy.set_time(50.0)
    policy.on_completed("a1", JobState.COMPLETED_SUCCESSFULLY)
    assert order.usage == {"alice": 100.0}  # 2 hosts × 50 s
    assert policy.schedule() == [StartJob("b1", ProcSet((0, 1)))]  # bob has used nothing: first


def test_fifo_keeps_arrival_order_after_earlier_jobs_left_the_queue():
    """Arrival numbers are never reused: a job arriving after others started still comes after the job
    that has waited since before them (a bug of the core's static queue, found by the fair-share
    property tests)."""
    from procset import ProcSet

    from wattsched.schedulers.backfill import FcfsNoBackfill
    from wattsched.schedulers.core import PolicyScheduler
    from wattsched.schedulers.order import Fifo
    from wattsched.schedulers.state import JobState, StartJob

    policy = PolicyScheduler(order=Fifo(), backfill=FcfsNoBackfill())
    policy.start(2)
    for k in range(3):
        policy.on_submitted(QueuedJob(f"j{k}", 1, 10.0, 0.0))
    assert len(policy.schedule()) == 2  # j0, j1 start; j2 waits
    policy.set_time(1.0)
    policy.on_submitted(QueuedJob("late", 1, 10.0, 1.0))
    policy.on_completed("j0", JobState.COMPLETED_SUCCESSFULLY)
    assert policy.schedule() == [StartJob("j2", ProcSet(0))]
