# Seconds the slowest GoogleTest cases take under the ASan debug build (CI's `ctest -j2`), as COST
# properties: ctest starts the costliest tests first, so that in a clean clone (no Testing/ cost
# data yet) a long test does not start last and run alone on one core while the other idles. Included by ctest
# after the discovered GoogleTest lists (CMakeLists.txt, TEST_INCLUDE_FILES); a name that is not
# defined (a TSan build defines only exec and milp) is ignored. Rough numbers do: only the order
# matters.
set(hx_test_costs
    MoiraiMilpTest.ExampleOneReachesTheProvenOptimum30 45
    ExactPlannerTest.WithoutWarmStartsExactPlannersStillPlan 27
    PlannerOptionsCliTest.GetfAndSortinghatWriteTheirModels 15
    ExactPlannerTest.SortingHatReadsAnExternalSolutionOfItsOneSubmodel 14
    InspectCliTest.BadInputExitsTwoWithTheFileAndField 13
    ExactPlannerTest.EveryExactPlannerWritesItsModelInLpAndMps 9
    ProgressCliTest.QuietPrintsNoProgress 9
    AllPlanners.ZooModels 7
    InterruptCliTest.SigintDuringAMilpWritesTheBestValidPlanAndExits130 7
    WarmPlanning.NeverSlowerThanTheColdPlanSimulatedWarm 6
    ChrionBaseline.AlphaZeroIsNoSlowerThanGpuOnly 6)
list(LENGTH hx_test_costs hx_n)
math(EXPR hx_last "${hx_n} - 1")
foreach(hx_i RANGE 0 ${hx_last} 2)
  math(EXPR hx_j "${hx_i} + 1")
  list(GET hx_test_costs ${hx_i} hx_name)
  list(GET hx_test_costs ${hx_j} hx_cost)
  set_tests_properties(${hx_name} PROPERTIES COST ${hx_cost})
endforeach()
