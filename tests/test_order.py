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
